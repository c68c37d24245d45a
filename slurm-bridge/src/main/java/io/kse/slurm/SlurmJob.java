package io.kse.slurm;

import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * A job as Slurm reports it, reduced to what the extender needs.
 *
 * @param nodes the nodes allocated to the job (empty while pending)
 * @param stateReason Slurm's reason, e.g. {@code Resources}, {@code Priority}, {@code BeginTime}
 * @param restartCount how many times the job was requeued (a preempted job increments it)
 * @param tresPerNode GRES per node, e.g. {@code gres:gpu:h100:4}
 * @param lastChange the latest of submit/start/end/preempt times Slurm reported
 * @param preemptTime when Slurm chose this job for preemption, while it runs on within its grace
 *     time ({@code preempt_time}); empty otherwise
 * @param gresDetail GRES held on each allocated node, in {@link #nodes()} order, e.g. {@code
 *     gpu:h100:4(IDX:0-3)} ({@code gres_detail}, every supported REST version)
 * @param user the Slurm user who submitted it ({@code user_name}, every supported REST version): a
 *     comment anyone can copy says whom a job claims to stand for, its user who submitted it
 * @param timeLimit the job's time limit; empty when unlimited or not reported
 */
public record SlurmJob(
    long id,
    String name,
    String comment,
    JobState state,
    String stateReason,
    String partition,
    String qos,
    List<String> nodes,
    int nodeCount,
    Instant submitTime,
    Optional<Instant> startTime,
    Optional<Instant> endTime,
    int restartCount,
    String tresPerNode,
    String features,
    long priority,
    Instant lastChange,
    Optional<Instant> preemptTime,
    List<String> gresDetail,
    String user,
    Optional<java.time.Duration> timeLimit) {

  public SlurmJob {
    nodes = List.copyOf(nodes);
    gresDetail = List.copyOf(gresDetail);
    user = user == null ? "" : user;
  }

  /** A job not chosen for preemption, whose per-node GRES is not known. */
  public SlurmJob(
      long id,
      String name,
      String comment,
      JobState state,
      String stateReason,
      String partition,
      String qos,
      List<String> nodes,
      int nodeCount,
      Instant submitTime,
      Optional<Instant> startTime,
      Optional<Instant> endTime,
      int restartCount,
      String tresPerNode,
      String features,
      long priority,
      Instant lastChange) {
    this(
        id,
        name,
        comment,
        state,
        stateReason,
        partition,
        qos,
        nodes,
        nodeCount,
        submitTime,
        startTime,
        endTime,
        restartCount,
        tresPerNode,
        features,
        priority,
        lastChange,
        Optional.empty(),
        List.of(),
        "",
        Optional.empty());
  }

  /**
   * Whether Slurm has chosen this running job for preemption and it runs on within its grace time:
   * its nodes are still held, but not for long.
   */
  public boolean preempting() {
    return state == JobState.RUNNING && preemptTime.isPresent();
  }

  /** This job as submitted by Slurm user {@code name}. */
  public SlurmJob withUser(String name) {
    return with(lastChange, preemptTime, gresDetail, name);
  }

  /**
   * The run this job just lost, as it was: running on {@code onNodes}, one restart fewer if Slurm
   * requeued it, started when Slurm says or, if that is gone with the run, at the epoch (it ran
   * before it ended; no more is known).
   */
  public SlurmJob runBefore(List<String> onNodes, Instant endedBy) {
    Optional<Instant> started =
        startTime.filter(t -> !t.isAfter(endedBy)).or(() -> Optional.of(Instant.EPOCH));
    int restarts = state == JobState.PENDING && restartCount > 0 ? restartCount - 1 : restartCount;
    return new SlurmJob(
        id,
        name,
        comment,
        JobState.RUNNING,
        "None",
        partition,
        qos,
        onNodes,
        onNodes.size(),
        submitTime,
        started,
        Optional.empty(),
        restarts,
        tresPerNode,
        features,
        priority,
        lastChange,
        Optional.empty(),
        gresDetail,
        user,
        timeLimit);
  }

  private SlurmJob with(
      Instant changed, Optional<Instant> preempt, List<String> detail, String submitter) {
    return new SlurmJob(
        id,
        name,
        comment,
        state,
        stateReason,
        partition,
        qos,
        nodes,
        nodeCount,
        submitTime,
        startTime,
        endTime,
        restartCount,
        tresPerNode,
        features,
        priority,
        changed,
        preempt,
        detail,
        submitter,
        timeLimit);
  }

  /**
   * How this job's run ended where its state does not say: Slurm 22.05 reports a job still ending
   * on its nodes as COMPLETING alone ({@code job_state_string}: a flag wins over the base state),
   * which hides whether it was cancelled, timed out, preempted or lost a node — and with the hold
   * (kse-node-epilog) a placeholder stays COMPLETING until its pod is gone. Then: a preemption time
   * says PREEMPTED, a restart counted PENDING (requeued: it waits again), a node's failure
   * NODE_FAIL, a run as long as its time limit TIMEOUT, and otherwise CANCELLED (a placeholder
   * never ends by itself). Any other state is itself.
   */
  public JobState endedAs() {
    if (state != JobState.COMPLETING) {
      return state;
    }
    if (preemptTime.isPresent()) {
      return JobState.PREEMPTED;
    }
    if (restartCount > 0) {
      // requeued: slurmctld counts the restart as it requeues, while the run still completes
      // (job_mgr.c _job_requeue_op); a placeholder is requeued only by hand, and one requeued
      // before
      // and then cancelled cannot be told from it here
      return JobState.PENDING;
    }
    if (stateReason.equals("NodeDown") || stateReason.equals("NodeFail")) {
      return JobState.NODE_FAIL;
    }
    if (timeLimit.isPresent() && startTime.isPresent() && endTime.isPresent()) {
      java.time.Duration ran = java.time.Duration.between(startTime.get(), endTime.get());
      // Slurm ends a job at its limit on its next check (every 30 s), never before it
      if (ran.compareTo(timeLimit.get()) >= 0) {
        return JobState.TIMEOUT;
      }
    }
    return JobState.CANCELLED;
  }

  /**
   * The GPU indices Slurm gave this job on {@code slurmNode} ({@code gpu:h100:4(IDX:0-3)} →
   * 0,1,2,3); empty when the job does not hold that node or Slurm did not say (GPUs configured
   * without {@code File=} have no indices).
   */
  public Optional<List<Integer>> gpuIndicesOn(String slurmNode) {
    int i = nodes.indexOf(slurmNode);
    if (i < 0 || i >= gresDetail.size()) {
      return Optional.empty();
    }
    return GpuIndices.parse(gresDetail.get(i));
  }

  /**
   * Where this job's Slurm shards are on {@code slurmNode} (issue 46); empty when it holds none
   * there or Slurm's answer cannot place them ({@link GpuShards}).
   */
  public Optional<GpuShards> shardsOn(String slurmNode) {
    int i = nodes.indexOf(slurmNode);
    if (i < 0 || i >= gresDetail.size()) {
      return Optional.empty();
    }
    return GpuShards.parse(gresDetail.get(i));
  }

  /** The placeholder tag in the comment, if this job is one of ours. */
  public Optional<PlaceholderTag> placeholder() {
    return PlaceholderTag.fromComment(comment);
  }

  private static final java.util.regex.Pattern GPUS =
      java.util.regex.Pattern.compile("gpu(?::[^:,/]+)?:(\\d+)");

  /**
   * GPUs per node from {@code tres_per_node} ({@code gres:gpu:h100:8}, {@code gres/gpu:8}); 0 if
   * none.
   */
  public int gpusPerNode() {
    java.util.regex.Matcher m = GPUS.matcher(tresPerNode);
    return m.find() ? Integer.parseInt(m.group(1)) : 0;
  }

  /** True when the job is running and its nodes are known. */
  public boolean isAllocated() {
    return state == JobState.RUNNING && !nodes.isEmpty();
  }
}
