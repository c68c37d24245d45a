package io.kse.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

/** MIG devices (issue 46): a claim's MIG profile becomes the typed Slurm GRES the policy maps. */
class MigPolicyTest {
  private static final Instant NOW = Instant.parse("2026-11-29T10:00:00Z");
  private final PlacementPolicy policy =
      new PlacementPolicy(
          PolicyParser.parse(Policies.example("shared-gpus.yaml"), "shared-gpus.yaml"));

  private static PodFacts pod(boolean small, Map<String, Long> mig) {
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
        .withDraMigDevices(mig);
  }

  private Decision decide(PodFacts p) {
    return policy.decide(p, new PreemptionLedger(), NOW);
  }

  @Test
  void aMigProfileBecomesItsSlurmGresType() {
    Decision d = decide(pod(true, Map.of("1g.10gb", 1L)));
    assertThat(d).isInstanceOf(Decision.Place.class);
    JobSpec job = ((Decision.Place) d).job();
    assertThat(job.gresPerNode()).contains("gpu:h100_1g.10gb:1");
    assertThat(job.exclusive()).isFalse();
    assertThat(d.record()).anySatisfy(c -> assertThat(c.effect()).startsWith("MIG: {1g.10gb=1}"));
  }

  @Test
  void twoProfilesAreTwoTypedGresParts() {
    JobSpec job = ((Decision.Place) decide(pod(true, Map.of("3g.40gb", 1L, "1g.10gb", 2L)))).job();
    assertThat(job.gresPerNode()).contains("gpu:h100_1g.10gb:2,gpu:h100_3g.40gb:1");
  }

  @Test
  void aProfileThePolicyDoesNotMapIsRefusedNamingTheMappedOnes() {
    assertThat(((Decision.Reject) decide(pod(true, Map.of("2g.20gb", 1L)))).reason())
        .contains("asks MIG device(s) {2g.20gb=1}")
        .contains("cluster.migProfiles maps no Slurm GRES type to profile 2g.20gb")
        .contains("[1g.10gb, 3g.40gb]");
  }

  @Test
  void aTierThatMayNotShareAndMixedKindsAreRefused() {
    assertThat(((Decision.Reject) decide(pod(false, Map.of("1g.10gb", 1L)))).reason())
        .contains("tier inference may not share GPUs");
    assertThat(((Decision.Reject) decide(pod(true, Map.of("1g.10gb", 1L)).withDraGpus(1))).reason())
        .contains("a pod takes one kind of GPU");
  }

  /** A MIG slice may preempt a whole GPU's worth: a used-up GPU budget stops it too. */
  @Test
  void aUsedUpGpuBudgetStopsAMigPodPreemptingAndMigAloneLetsATierShare() {
    String yaml =
        """
        apiVersion: kse.io/v1alpha1
        kind: PlacementPolicy
        cluster:
          preemptMode: partition
          migProfiles: {1g.10gb: h100_1g.10gb}
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
    Decision d = budgeted.decide(pod(true, Map.of("1g.10gb", 1L)), new PreemptionLedger(), NOW);
    assertThat(((Decision.Place) d).job().preempting()).isFalse();
    assertThat(d.record())
        .anySatisfy(c -> assertThat(c.effect()).contains("budget of tier small-models used up"));
  }

  @Test
  void aMigProfileOrTypeThatCannotBeOneIsRefusedAtLoad() {
    String bad =
        Policies.example("shared-gpus.yaml").replace("3g.40gb: h100_3g.40gb", "3g.40gb: \"a b\"");
    assertThatThrownBy(() -> PolicyParser.parse(bad, "p.yaml"))
        .isInstanceOf(PolicyValidationException.class)
        .hasMessageContaining("cluster.migProfiles.3g.40gb")
        .hasMessageContaining("is not a Slurm GRES type");
  }
}
