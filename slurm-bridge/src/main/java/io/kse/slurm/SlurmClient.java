package io.kse.slurm;

import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * Everything the extender asks of Slurm. One implementation per transport (REST); decorators add
 * resilience and metrics; tests use a fake. All methods block and may throw {@link SlurmException}.
 */
public interface SlurmClient extends AutoCloseable {

  /** The slurmrestd API version this client speaks. */
  ApiVersion apiVersion();

  /** Submits a placeholder job and returns its id. Not idempotent: never retried. */
  long submit(JobSubmission job);

  /** The job, or empty when slurmctld says definitely that no such job exists. */
  Optional<SlurmJob> job(long jobId);

  /** All jobs if anything changed since {@code since}, else {@link JobListing#unchanged}. */
  JobListing jobsChangedSince(Instant since);

  /**
   * slurmctld's whole job table, keeping only the jobs {@code keep} accepts, as they are read: what
   * is held grows with what is kept, not with the table (at 50,000 jobs the table is some 150 MB of
   * JSON). The safety net's listing. This default lists everything first.
   */
  default List<SlurmJob> allJobs(java.util.function.Predicate<SlurmJob> keep) {
    return jobsChangedSince(Instant.EPOCH).jobs().stream().filter(keep).toList();
  }

  /**
   * The states of these jobs, in as few calls as the API version allows: an answer whose size grows
   * with the jobs asked about, never with other users' jobs. A job slurmctld no longer has is left
   * out. This default asks for each job on its own (v0.0.38 has no batch form).
   */
  default java.util.Map<Long, JobState> jobStates(java.util.Collection<Long> ids) {
    java.util.Map<Long, JobState> out = new java.util.LinkedHashMap<>();
    for (long id : ids) {
      job(id).ifPresent(j -> out.put(id, j.state()));
    }
    return out;
  }

  /**
   * Every job's id and state (everyone's), in one answer of some 60 bytes a job where the API has
   * the call (v0.0.41+: {@code jobs/state} with no ids), else empty. What a new writer catches up
   * with instead of the whole table: the ids its last listing did not hold are the jobs made since.
   * Ids slurmctld writes otherwise (an array's {@code 12_3}) are left out: no placeholder is one.
   */
  default Optional<java.util.Map<Long, JobState>> allJobStates() {
    return Optional.empty();
  }

  /** Cancels (SIGKILL) the job; cancelling an ended or unknown job is not an error. */
  void cancel(long jobId);

  /** Changes a job, usually a pending one. */
  void update(long jobId, JobUpdate update);

  /** All nodes. */
  List<SlurmNode> nodes();

  /** One node, empty when Slurm has none of that name. This default lists them all. */
  default Optional<SlurmNode> node(String name) {
    return nodes().stream().filter(n -> n.name().equals(name)).findFirst();
  }

  /**
   * All nodes if any changed since {@code since}, else {@link NodeListing#unchanged}. This default
   * always lists them (a client without the query).
   */
  default NodeListing nodesChangedSince(Instant since) {
    return new NodeListing(true, nodes(), Instant.now().minusSeconds(1));
  }

  /** All partitions, with their preemption settings. */
  List<SlurmPartition> partitions();

  /** All QoS definitions; needs slurmdbd (a {@link SlurmRejectedException} says so without it). */
  List<SlurmQos> qos();

  /** Drains a node with a reason (Slurm requires one); running jobs continue. */
  void drain(String node, String reason);

  /** Resumes a drained node. */
  void resume(String node);

  /** Checks that slurmrestd and slurmctld answer; throws when they do not. */
  void ping();

  /**
   * The Slurm release slurmrestd answers for, as its answers' {@code meta} says; empty when it says
   * none. Read once and kept: a call, not a cache read, the first time.
   */
  default Optional<SlurmRelease> release() {
    return Optional.empty();
  }

  @Override
  default void close() {}
}
