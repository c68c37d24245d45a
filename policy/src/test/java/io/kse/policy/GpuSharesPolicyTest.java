package io.kse.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Part of a GPU (issue 46): shares asked through DRA become Slurm shards. */
class GpuSharesPolicyTest {
  private static final Instant NOW = Instant.parse("2026-11-28T10:00:00Z");
  private final PlacementPolicy shared =
      new PlacementPolicy(
          PolicyParser.parse(Policies.example("shared-gpus.yaml"), "shared-gpus.yaml"));

  private static PodFacts pod(boolean small, long shares) {
    return new PodFacts(
            "serving",
            "p",
            "uid-1",
            small ? Map.of("kse.io/gpu-share", "true") : Map.of(),
            Map.of(),
            Optional.empty(),
            OptionalInt.empty(),
            Optional.empty(),
            1000,
            1L << 30,
            Map.of(),
            OptionalLong.empty())
        .withDraGpuShares(shares);
  }

  private Decision decide(PodFacts p) {
    return shared.decide(p, new PreemptionLedger(), NOW);
  }

  @Test
  void sharesBecomeShardsHeldOnOneGpu() {
    Decision d = decide(pod(true, 1));
    assertThat(d).isInstanceOf(Decision.Place.class);
    JobSpec job = ((Decision.Place) d).job();
    assertThat(job.gresPerNode()).contains("shard:1");
    assertThat(job.exclusive()).isFalse();
    assertThat(d.record())
        .anySatisfy(c -> assertThat(c.effect()).startsWith("shared: 1 of a GPU's 4 shards"));
  }

  @ParameterizedTest
  @ValueSource(longs = {1, 2, 3, 4})
  void anyShareUpToAGpusIsPlaced(long shares) {
    assertThat(((Decision.Place) decide(pod(true, shares))).job().gresPerNode())
        .contains("shard:" + shares);
  }

  @Test
  void moreSharesThanAGpuHasAreRefused() {
    assertThat(((Decision.Reject) decide(pod(true, 5))).reason())
        .contains("asks 5 share(s) of a GPU")
        .contains("a GPU has 4 (cluster.gpuShares.perGpu)");
  }

  @Test
  void aTierThatMayNotShareRefuses() {
    assertThat(((Decision.Reject) decide(pod(false, 1))).reason())
        .contains("tier inference may not share GPUs (tiers[].shareGpus)");
  }

  @Test
  void wholeGpusAndSharesInOnePodAreRefused() {
    PodFacts both = pod(true, 1).withDraGpus(1);
    assertThat(((Decision.Reject) decide(both)).reason())
        .contains("a pod takes whole GPUs or part of one, not both");
  }

  @Test
  void aPolicyWithoutSharesRefusesShares() {
    PlacementPolicy minimal = new PlacementPolicy(Policies.minimal());
    Decision d = minimal.decide(pod(true, 1), new PreemptionLedger(), NOW);
    assertThat(((Decision.Reject) d).reason()).contains("no shared GPUs (cluster.gpuShares)");
  }

  /** A share may preempt a whole GPU's worth: a used-up GPU budget stops it too. */
  @Test
  void aUsedUpGpuBudgetStopsASharePreempting() {
    String yaml =
        """
        apiVersion: kse.io/v1alpha1
        kind: PlacementPolicy
        cluster:
          preemptMode: partition
          gpuShares: {gres: shard, perGpu: 4}
        defaultTier: small-models
        tiers:
          - name: small-models
            slurm: {partition: inference, fallbackPartition: inference-nopreempt}
            mayPreempt: [training]
            shareGpus: true
          - name: training
            slurm: {partition: training}
            preemptible: true
        preemption:
          budgets:
            - {tier: small-models, maxGpus: 0, window: 1h}
        """;
    PlacementPolicy budgeted = new PlacementPolicy(PolicyParser.parse(yaml, "b.yaml"));
    Decision d = budgeted.decide(pod(true, 1), new PreemptionLedger(), NOW);
    assertThat(((Decision.Place) d).job().preempting()).isFalse();
    assertThat(d.record())
        .anySatisfy(c -> assertThat(c.effect()).contains("budget of tier small-models used up"));
  }

  @Test
  void aSharingTierNeedsTheClustersSharesAtLoad() {
    String yaml =
        Policies.example("shared-gpus.yaml")
            .replaceAll("(?s)  gpuShares:.*?capacity: shares\n", "")
            .replaceAll("(?s)  # MIG slices.*?3g.40gb: h100_3g.40gb\n", "");
    assertThatThrownBy(() -> PolicyParser.parse(yaml, "x.yaml"))
        .isInstanceOf(PolicyValidationException.class)
        .hasMessageContaining("tiers[0].shareGpus")
        .hasMessageContaining("needs cluster.gpuShares")
        .hasMessageContaining("or cluster.migProfiles");
  }
}
