package io.kse.slurm.cache;

import io.kse.slurm.PlaceholderTag;
import io.kse.slurm.SlurmException;
import io.kse.slurm.SlurmJob;
import io.kse.slurm.SlurmNode;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Optional;

/**
 * What the extender may know of Slurm: read-only, answered from memory, never a call to Slurm. The
 * state cache ({@link SlurmStateCache}) is the one implementation; kube-scheduler's requests, the
 * reconciler and {@code /explain} read through this, so none of them can start a Slurm call.
 */
public interface SlurmView {
  /** The latest consistent view; every other read here is a look into one. */
  Snapshot snapshot();

  default Optional<SlurmJob> job(long id) {
    return snapshot().job(id);
  }

  /** The placeholder kept under a placement key (a pod's UID, or its group's key). */
  default Optional<SlurmJob> jobFor(String placementKey) {
    return snapshot().jobFor(placementKey);
  }

  /** Live placeholders under this key besides {@link #jobFor}'s. */
  default List<SlurmJob> duplicatesOf(String placementKey) {
    return snapshot().duplicatesOf(placementKey);
  }

  default Optional<SlurmNode> node(String name) {
    return snapshot().node(name);
  }

  default Collection<SlurmNode> nodes() {
    return snapshot().nodes().values();
  }

  /**
   * When Slurm last told us this job's state (a read or a state check): what a snapshot says of a
   * job is only as new as this. EPOCH if never.
   */
  Instant confirmedAt(long jobId);

  /** True once the job table and the node table have each been read and published. */
  boolean synced();

  /** Time since the last successful pass over Slurm (very large before the first). */
  Duration age();

  /** Why the latest pass failed; empty once a pass succeeds. */
  Optional<SlurmException> lastError();

  /** The job's placeholder tag, if the job is one of ours to act on. */
  Optional<PlaceholderTag> ours(SlurmJob job);

  /** Whether this job is one the cache keeps or is looking for. */
  boolean knows(long jobId);

  /** Whether this job is being looked for (we made it, or a hint named it) and not read yet. */
  boolean lookingFor(long jobId);

  /**
   * Whether a job someone names is worth a read: neither known nor dismissed lately (read and found
   * not ours, or twice not there). A pod's annotation can name any job.
   */
  boolean worthLookingFor(long jobId);
}
