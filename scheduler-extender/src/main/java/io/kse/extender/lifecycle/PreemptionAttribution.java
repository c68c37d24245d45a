package io.kse.extender.lifecycle;

import io.kse.extender.k8s.EventReason;
import io.kse.extender.k8s.PodActions;
import io.kse.extender.k8s.PodRef;
import io.kse.extender.metrics.ExtenderMetrics;
import io.kse.policy.PlacementPolicy;
import io.kse.policy.PreemptionLedger;
import io.kse.slurm.PlaceholderTag;
import io.kse.slurm.SlurmJob;
import io.kse.slurm.cache.JobChange;
import io.kse.slurm.preemption.PreemptionTracker;
import java.time.Clock;
import java.util.Optional;
import java.util.concurrent.Executor;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What follows a preemption {@link PreemptionTracker} attributed: the pod is told which job it took
 * the nodes of, the tier's budget is charged the victim's GPUs and nodes, and it is counted.
 */
final class PreemptionAttribution {
  private static final Logger LOG = LoggerFactory.getLogger(PreemptionAttribution.class);

  private final Supplier<PlacementPolicy> policy;
  private final PreemptionLedger ledger;
  private final PodActions actions;
  private final ExtenderMetrics metrics;
  private final Clock clock;
  private final Executor workers;
  private final java.util.function.BooleanSupplier mayAct;
  private final PreemptionTracker tracker;

  /** A job's placeholder tag if the job is ours (an impostor's tag is not). */
  private final java.util.function.Function<SlurmJob, java.util.Optional<PlaceholderTag>> ours;

  /** The tier the policy gives a pod the informer holds; empty when it is gone. */
  private final java.util.function.Function<PodRef, java.util.Optional<String>> podTier;

  PreemptionAttribution(
      Supplier<PlacementPolicy> policy,
      PreemptionLedger ledger,
      PodActions actions,
      ExtenderMetrics metrics,
      Clock clock,
      Executor workers,
      java.util.function.BooleanSupplier mayAct,
      java.util.function.Function<PodRef, java.util.Optional<String>> podTier,
      java.util.function.Function<SlurmJob, java.util.Optional<PlaceholderTag>> ours) {
    this.tracker =
        new PreemptionTracker(
            this::preempted, j -> ours.apply(j).isPresent(), PreemptionAttribution::unattributed);
    this.ours = ours;
    this.podTier = podTier;
    this.policy = policy;
    this.ledger = ledger;
    this.actions = actions;
    this.metrics = metrics;
    this.clock = clock;
    this.workers = workers;
    this.mayAct = mayAct;
  }

  /** A preemption none of ours can be charged: another user's job took the nodes (or none did). */
  private static void unattributed(SlurmJob victim) {
    LOG.info(
        "preemption_unattributed victimJob={} partition={} nodes={} reason=\"none of our"
            + " placeholders took its nodes or was pending, or the policy refused each\"",
        victim.id(),
        victim.partition(),
        victim.nodes());
  }

  void observe(JobChange change) {
    tracker.observe(change);
  }

  /**
   * Charges (and, on the writer, tells) the preemption the tracker found; false when the pair
   * cannot stand: the policy says the placeholder's tier may not preempt the victim's.
   */
  private boolean preempted(
      SlurmJob placeholder, SlurmJob victim, PreemptionTracker.Attribution how) {
    var p = policy.get().policy();
    // the pod's own tier: several tiers may share the placeholder's partition or QoS
    String tier =
        ours.apply(placeholder)
            .flatMap(t -> podTier.apply(PodRef.of(t)))
            .or(
                () ->
                    p.tierOfSlurmJob(placeholder.partition(), placeholder.qos()).map(t -> t.name()))
            .orElse("unknown");
    String victimTier =
        p.tierOfSlurmJob(victim.partition(), victim.qos()).map(t -> t.name()).orElse("unknown");
    // a job the policy says this tier may not preempt lost its nodes some other way (requeued,
    // or preempted by a higher partition's job) before our placeholder took them: not ours to
    // charge. (A job requeued by hand whose node a placeholder then takes cannot be told from a
    // preemption: Slurm keeps no record of it without slurmdbd; docs/runbook.md.)
    Optional<String> refused = p.chargeRefused(tier, victim.partition(), victim.qos());
    if (refused.isPresent()) {
      LOG.info(
          "preemption_not_charged slurmJob={} tier={} victimJob={} victimTier={} attribution={}"
              + " reason=\"{}\"",
          placeholder.id(),
          tier,
          victim.id(),
          victimTier,
          how.label(),
          refused.get());
      return false;
    }
    long gpus = (long) victim.gpusPerNode() * victim.nodes().size();
    // every replica charges its own ledger, so budgets hold across a fail-over; only the writer
    // counts and tells (once, not once per replica). A victim charged already (restored from what
    // the previous writer saved, which told the pod) is not charged or told again.
    // the run it lost: a job requeued and preempted again is a second preemption
    if (!ledger.record(
        tier, gpus, victim.nodes().size(), clock.instant(), victim.id(), victim.restartCount())) {
      return true;
    }
    // every charge is logged, the standby's too (writer=false): a charge nobody was told of is
    // still one an SRE can find (a standby may hold a record the writer never made)
    boolean writer = mayAct.getAsBoolean();
    PlaceholderTag tag = ours.apply(placeholder).orElseThrow();
    PodRef ref = PodRef.of(tag);
    LOG.info(
        "slurm_preemption pod={} uid={} slurmJob={} tier={} victimJob={} victimRun={}"
            + " victimTier={} gpus={} nodes={} attribution={} writer={}",
        ref,
        ref.uid(),
        placeholder.id(),
        tier,
        victim.id(),
        victim.restartCount(),
        victimTier,
        gpus,
        victim.nodes(),
        how.label(),
        writer);
    if (!writer) {
      return true;
    }
    metrics.preemption(tier, victimTier, how.label());
    String what =
        "Slurm preempted job "
            + victim.id()
            + " ("
            + victim.name()
            + ", partition "
            + victim.partition()
            + (victim.qos().isEmpty() ? "" : ", qos " + victim.qos())
            + ", tier "
            + victimTier
            + ", "
            + gpus
            + " GPUs) on "
            + String.join(",", victim.nodes())
            + (how == PreemptionTracker.Attribution.EXACT
                ? " for this pod's placeholder job " + placeholder.id()
                : " while this pod's placeholder job "
                    + placeholder.id()
                    + " was pending (inferred: none of our placeholders took its nodes; Slurm"
                    + " preempts for each pending job on its own), charged to tier "
                    + tier);
    workers.execute(() -> actions.event(ref, EventReason.PREEMPTED, what));
    return true;
  }
}
