package io.kse.policy.cli.replay;

import static org.assertj.core.api.Assertions.assertThat;

import io.kse.policy.PolicyParser;
import io.kse.policy.PreemptionLedger;
import io.kse.policy.model.Policy;
import io.kse.policy.replay.ReplayReport;
import io.kse.policy.replay.Trace;
import io.kse.slurm.JobState;
import io.kse.slurm.SlurmJob;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * A replay pairs preempted jobs with placeholders as the extender does (issue 42: it once had a
 * pairing of its own — victim first only, within 15 s, charging tiers that may not preempt). These
 * sequences are the extender's PreemptionTracker and PreemptionAttribution cases: either order, a
 * pairing tens of seconds apart, and a pairing the policy refuses.
 */
class ReplayAttributionTest {
  static final Policy POLICY =
      PolicyParser.parse(
          """
          apiVersion: kse.io/v1alpha1
          kind: PlacementPolicy
          cluster: {preemptMode: partition, gpuGres: gpu, gpuType: h100}
          defaultTier: inference
          tiers:
            - name: inference
              slurm: {partition: inference}
              mayPreempt: [training]
            - name: research
              slurm: {partition: research}
              preemptible: true
            - name: training
              slurm: {partition: training}
              preemptible: true
          """,
          "test");
  static final Instant T0 = Instant.parse("2026-11-28T05:00:00Z");

  final PreemptionLedger ledger = new PreemptionLedger();
  final ReplayAttribution attribution = new ReplayAttribution(POLICY, ledger, T0);

  static Trace.SlurmJob spec(String id, String partition) {
    return new Trace.SlurmJob(
        Duration.ZERO,
        id,
        "alice",
        "ml",
        partition,
        Optional.empty(),
        1,
        8,
        Duration.ofHours(1),
        true);
  }

  static SlurmJob job(
      long id, String partition, JobState state, String node, Instant start, Instant end) {
    boolean ran = state != JobState.PENDING;
    return new SlurmJob(
        id,
        "j" + id,
        "",
        state,
        "None",
        partition,
        "",
        ran ? List.of(node) : List.of(),
        1,
        T0.minusSeconds(600),
        ran ? Optional.of(start) : Optional.empty(),
        state.isFinal() ? Optional.of(end) : Optional.empty(),
        0,
        "gres:gpu:h100:8",
        "",
        1,
        end);
  }

  /** Trace time is wall time here (a scale of 1). */
  void see(SlurmJob j, Instant at) {
    attribution.observe(j, at, Duration.between(T0, at));
  }

  @Test
  void aVictimAndItsTakerArePairedInEitherOrderAndChargedOnce() {
    attribution.training(10, spec("train-a", "training"));
    attribution.training(11, spec("train-b", "training"));
    attribution.placeholder(20, "inference");
    attribution.placeholder(21, "inference");
    see(job(10, "training", JobState.RUNNING, "n1", T0, T0), T0);
    see(job(11, "training", JobState.RUNNING, "n2", T0, T0), T0);
    // victim first, its taker 30 s later: the replay's own pairing gave up after 15 s
    Instant lost = T0.plusSeconds(600);
    see(job(10, "training", JobState.PREEMPTED, "n1", T0, lost), lost);
    see(job(20, "inference", JobState.RUNNING, "n1", lost, lost), lost.plusSeconds(30));
    // taker first (the same poll order the extender meets)
    see(
        job(21, "inference", JobState.RUNNING, "n2", lost.plusSeconds(40), lost),
        lost.plusSeconds(40));
    see(
        job(11, "training", JobState.PREEMPTED, "n2", T0, lost.plusSeconds(40)),
        lost.plusSeconds(41));
    attribution.finish();
    assertThat(attribution.preemptions())
        .extracting(ReplayReport.Preemption::victim)
        .containsExactly("train-a", "train-b");
    assertThat(attribution.unattributed()).isZero();
    assertThat(ledger.usage("inference", Duration.ofHours(1), lost.plusSeconds(60)).gpus())
        .isEqualTo(16);
  }

  @Test
  void aJobOfATierTheTakerMayNotPreemptIsLostWorkButNotCharged() {
    attribution.training(10, spec("paper", "research"));
    attribution.placeholder(20, "inference");
    see(job(10, "research", JobState.RUNNING, "n1", T0, T0), T0);
    Instant lost = T0.plusSeconds(60);
    see(job(10, "research", JobState.PREEMPTED, "n1", T0, lost), lost);
    see(job(20, "inference", JobState.RUNNING, "n1", lost, lost), lost.plusSeconds(1));
    attribution.finish();
    assertThat(attribution.preemptions())
        .extracting(ReplayReport.Preemption::victim)
        .containsExactly("paper");
    assertThat(attribution.unattributed()).isEqualTo(1);
    assertThat(ledger.usage("inference", Duration.ofHours(1), lost.plusSeconds(2)).gpus()).isZero();
  }
}
