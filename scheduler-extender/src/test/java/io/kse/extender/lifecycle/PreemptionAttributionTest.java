package io.kse.extender.lifecycle;

import static io.kse.slurm.preemption.PreemptionTrackerTest.T0;
import static io.kse.slurm.preemption.PreemptionTrackerTest.job;
import static org.assertj.core.api.Assertions.assertThat;

import io.kse.extender.metrics.ExtenderMetrics;
import io.kse.policy.PlacementPolicy;
import io.kse.policy.PolicyParser;
import io.kse.policy.PreemptionLedger;
import io.kse.slurm.JobState;
import io.kse.slurm.SlurmJob;
import io.kse.slurm.cache.JobChange;
import io.kse.slurm.testing.MutableClock;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * What follows an attributed preemption: every replica charges its budget ledger, only the writer
 * tells the pod and counts it, and a job that only claims to be ours is charged to nobody.
 */
class PreemptionAttributionTest {
  final MutableClock clock = new MutableClock(T0.plusSeconds(10));
  final PreemptionLedger ledger = new PreemptionLedger();
  final AtomicBoolean writer = new AtomicBoolean(true);
  final SimpleMeterRegistry meters = new SimpleMeterRegistry();
  final RecordingPodActions actions = new RecordingPodActions();
  final List<String> told = actions.calls;

  PreemptionAttribution attribution(java.util.function.Predicate<SlurmJob> ours) {
    return attribution(ours, "training");
  }

  /** With inference's placeholders allowed to preempt tier {@code mayPreempt} only. */
  PreemptionAttribution attribution(
      java.util.function.Predicate<SlurmJob> ours, String mayPreempt) {
    PlacementPolicy policy =
        new PlacementPolicy(
            PolicyParser.parse(
                """
                apiVersion: kse.io/v1alpha1
                kind: PlacementPolicy
                cluster: {preemptMode: partition, gpuGres: gpu}
                defaultTier: inference
                tiers:
                  - name: inference
                    slurm: {partition: inference}
                    mayPreempt: [%s]
                  - name: training
                    match: {labels: {kse-test/tier: training}}
                    slurm: {partition: training}
                    preemptible: true
                  - name: scavenger
                    match: {labels: {kse-test/tier: scavenger}}
                    slurm: {partition: scavenger}
                    preemptible: true
                """
                    .formatted(mayPreempt),
                "test"));
    return new PreemptionAttribution(
        () -> policy,
        ledger,
        actions,
        new ExtenderMetrics(meters),
        clock,
        Runnable::run,
        writer::get,
        ref -> Optional.of("inference"),
        j -> ours.test(j) ? j.placeholder() : Optional.empty());
  }

  /** Training on n0 requeued, placeholder 9 started there at once. */
  void preemption(PreemptionAttribution a) {
    SlurmJob train = job(1, false, JobState.RUNNING, "n0", T0, 0);
    a.observe(new JobChange(Optional.empty(), Optional.of(train), T0));
    a.observe(
        new JobChange(
            Optional.of(train),
            Optional.of(job(1, false, JobState.PENDING, null, null, 1)),
            T0.plusSeconds(10)));
    a.observe(
        new JobChange(
            Optional.of(job(9, true, JobState.PENDING, null, null, 0)),
            Optional.of(job(9, true, JobState.RUNNING, "n0", T0.plusSeconds(10), 0)),
            T0.plusSeconds(10)));
  }

  long gpusCharged() {
    return ledger.usage("inference", Duration.ofHours(1), clock.instant()).gpus();
  }

  @Test
  void theWriterChargesTellsAndCounts() {
    preemption(attribution(j -> true));
    assertThat(gpusCharged()).isEqualTo(8);
    assertThat(told)
        .singleElement()
        .asString()
        .startsWith("event PreemptedSlurmJob: Slurm preempted job 1");
    assertThat(meters.find("kse.preemptions").counter().count()).isEqualTo(1);
  }

  @Test
  void aReplicaThatIsNotTheWriterChargesItsLedgerButTellsNobody() {
    writer.set(false);
    preemption(attribution(j -> true));
    assertThat(gpusCharged()).as("budgets hold across a fail-over").isEqualTo(8);
    assertThat(told).isEmpty();
  }

  /**
   * Issue 29's soak: a charge only the standby recorded (kept by the union ledger) had no log line
   * anywhere. Every replica logs each charge it records, saying whether it is the writer.
   */
  @Test
  void aReplicaThatIsNotTheWriterLogsTheChargeItRecords() {
    writer.set(false);
    ch.qos.logback.classic.Logger log =
        (ch.qos.logback.classic.Logger)
            org.slf4j.LoggerFactory.getLogger(PreemptionAttribution.class);
    var appender =
        new ch.qos.logback.core.read.ListAppender<ch.qos.logback.classic.spi.ILoggingEvent>();
    appender.start();
    log.addAppender(appender);
    try {
      preemption(attribution(j -> true));
    } finally {
      log.detachAppender(appender);
    }
    assertThat(appender.list)
        .extracting(ch.qos.logback.classic.spi.ILoggingEvent::getFormattedMessage)
        .singleElement()
        .asString()
        .startsWith("slurm_preemption ")
        .contains("slurmJob=9", "victimJob=1", "victimRun=1", "gpus=8", "writer=false");
  }

  @Test
  void aJobThatOnlyClaimsToBeOursIsChargedToNobody() {
    preemption(attribution(j -> false));
    assertThat(gpusCharged()).isZero();
    assertThat(told).isEmpty();
  }

  /**
   * The soak's finding: a job that lost its nodes some other way (a higher partition's job, a hand
   * requeue) and whose node a placeholder then took, of a tier the policy says ours may not
   * preempt, was charged as our preemption.
   */
  @Test
  void aVictimOfATierThisTierMayNotPreemptIsNotCharged() {
    preemption(attribution(j -> true, "scavenger"));
    assertThat(gpusCharged()).isZero();
    assertThat(told).isEmpty();
    assertThat(meters.find("kse.preemptions").counter()).isNull();
  }

  /**
   * A pairing the policy refuses does not stand: the job the placeholder did preempt on the same
   * node, in the same second, is still charged to it, and only that one.
   */
  @Test
  void aPairingThePolicyRefusesLeavesThePlaceholderToItsRealVictim() {
    PreemptionAttribution a = attribution(j -> true);
    SlurmJob scavenger =
        io.kse.slurm.preemption.PreemptionTrackerTest.inPartition(
            job(2, false, JobState.RUNNING, "n0", T0, 0), "scavenger");
    a.observe(new JobChange(Optional.empty(), Optional.of(scavenger), T0));
    a.observe(
        new JobChange(
            Optional.of(scavenger),
            Optional.of(
                io.kse.slurm.preemption.PreemptionTrackerTest.inPartition(
                    job(2, false, JobState.PENDING, null, null, 1), "scavenger")),
            T0.plusSeconds(10)));
    preemption(a);
    assertThat(gpusCharged()).as("job 1, the training job it preempted").isEqualTo(8);
    assertThat(told).singleElement().asString().contains("Slurm preempted job 1 ");
  }

  /**
   * Issue 60: Slurm preempted training on n1 for placeholder 9, pending, then started 9 elsewhere
   * (on n0, beside others). Nothing of ours took n1; the victim is told and charged all the same,
   * inferred, once the pairing window passed.
   */
  @Test
  void aVictimWhoseNodesNoneOfOursTookIsToldAndChargedInferred() {
    PreemptionAttribution a = attribution(j -> true);
    SlurmJob pending = job(9, true, JobState.PENDING, null, null, 0);
    a.observe(new JobChange(Optional.empty(), Optional.of(pending), T0));
    SlurmJob train = job(1, false, JobState.RUNNING, "n1", T0, 0);
    a.observe(new JobChange(Optional.empty(), Optional.of(train), T0));
    a.observe(
        new JobChange(
            Optional.of(train),
            Optional.of(job(1, false, JobState.PENDING, null, null, 1)),
            T0.plusSeconds(2)));
    a.observe(
        new JobChange(
            Optional.of(pending),
            Optional.of(job(9, true, JobState.RUNNING, "n0", T0.plusSeconds(3), 0)),
            T0.plusSeconds(3)));
    assertThat(told).as("not before the window passed").isEmpty();
    a.observe(
        new JobChange(
            Optional.empty(),
            Optional.of(job(5, false, JobState.RUNNING, "n5", T0, 0)),
            T0.plusSeconds(70)));
    assertThat(gpusCharged()).isEqualTo(8);
    assertThat(told)
        .singleElement()
        .asString()
        .contains("Slurm preempted job 1", "while this pod's placeholder job 9 was pending")
        .contains("inferred");
    assertThat(meters.find("kse.preemptions").tag("attribution", "inferred").counter().count())
        .isEqualTo(1);
  }
}
