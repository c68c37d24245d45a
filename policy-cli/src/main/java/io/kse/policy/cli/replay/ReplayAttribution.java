package io.kse.policy.cli.replay;

import io.kse.policy.PreemptionLedger;
import io.kse.policy.model.Policy;
import io.kse.policy.replay.ReplayReport;
import io.kse.policy.replay.Trace;
import io.kse.slurm.JobState;
import io.kse.slurm.SlurmJob;
import io.kse.slurm.cache.JobChange;
import io.kse.slurm.preemption.PreemptionTracker;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Which placeholder took a preempted training job's nodes, in a replay, worked out as the extender
 * works it out: its own {@link PreemptionTracker} (either order, within its window; a victim
 * charged once) fed the changes the replay sees, and a pairing charged only where the policy says
 * the placeholder's tier may preempt the job's ({@link Policy#chargeRefused}). A preemption no
 * placeholder is charged for is still lost work, counted as unattributed.
 */
final class ReplayAttribution {
  private final Policy policy;
  private final PreemptionLedger ledger;
  private final Instant traceStart;
  private final PreemptionTracker tracker;
  private final Map<Long, String> tierOfPlaceholder = new HashMap<>();
  private final Map<Long, Trace.SlurmJob> training = new HashMap<>();
  private final Map<Long, SlurmJob> seen = new HashMap<>();
  private final Map<Long, Duration> runStart = new HashMap<>();
  private final Map<Long, Duration> lostRun = new HashMap<>();
  private final List<ReplayReport.Preemption> preemptions = new ArrayList<>();
  private int unattributed;
  private Duration now = Duration.ZERO;

  ReplayAttribution(Policy policy, PreemptionLedger ledger, Instant traceStart) {
    this.policy = policy;
    this.ledger = ledger;
    this.traceStart = traceStart;
    this.tracker =
        new PreemptionTracker(
            this::charge, j -> tierOfPlaceholder.containsKey(j.id()), this::unattributed);
  }

  /** A placeholder of this tier was submitted as {@code job}. */
  void placeholder(long job, String tier) {
    tierOfPlaceholder.put(job, tier);
  }

  /** Another user's job of the trace was submitted as {@code job}. */
  void training(long job, Trace.SlurmJob spec) {
    training.put(job, spec);
  }

  /**
   * What Slurm says of a job now ({@code wall}: the cluster's clock, which Slurm's times and the
   * pairing window use; {@code traceNow}: the trace's, for charges and lost work).
   */
  void observe(SlurmJob j, Instant wall, Duration traceNow) {
    now = traceNow;
    if (training.containsKey(j.id())) {
      if (j.state() == JobState.RUNNING) {
        runStart.putIfAbsent(j.id(), traceNow);
      } else if (j.state() == JobState.PREEMPTED && runStart.containsKey(j.id())) {
        lostRun.putIfAbsent(j.id(), traceNow.minus(runStart.get(j.id())));
      }
    }
    SlurmJob before = seen.put(j.id(), j);
    if (!j.equals(before)) {
      tracker.observe(new JobChange(Optional.ofNullable(before), Optional.of(j), wall));
    }
  }

  /** The trace ended: victims still waiting for a placeholder are lost work all the same. */
  void finish() {
    tracker.takeUnpaired().forEach(this::unattributed);
  }

  List<ReplayReport.Preemption> preemptions() {
    return preemptions;
  }

  int unattributed() {
    return unattributed;
  }

  private boolean charge(SlurmJob placeholder, SlurmJob victim, PreemptionTracker.Attribution how) {
    String tier = tierOfPlaceholder.get(placeholder.id());
    Trace.SlurmJob t = training.get(victim.id());
    if (tier == null
        || t == null
        || policy.chargeRefused(tier, victim.partition(), victim.qos()).isPresent()) {
      return false; // left for another placeholder, or unattributed once the window passes
    }
    long gpus = (long) t.gpusPerNode() * victim.nodes().size();
    ledger.record(
        tier,
        gpus,
        victim.nodes().size(),
        traceStart.plus(now),
        victim.id(),
        victim.restartCount());
    preemptions.add(new ReplayReport.Preemption(t.id(), t.partition(), gpus, ranFor(victim)));
    return true;
  }

  private void unattributed(SlurmJob victim) {
    Trace.SlurmJob t = training.get(victim.id());
    if (t == null) {
      return;
    }
    preemptions.add(
        new ReplayReport.Preemption(
            t.id(), t.partition(), (long) t.gpusPerNode() * victim.nodes().size(), ranFor(victim)));
    unattributed++;
  }

  private Duration ranFor(SlurmJob victim) {
    Duration start = runStart.get(victim.id());
    return lostRun.getOrDefault(victim.id(), start == null ? Duration.ZERO : now.minus(start));
  }
}
