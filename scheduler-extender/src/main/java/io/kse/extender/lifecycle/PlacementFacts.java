package io.kse.extender.lifecycle;

import io.kse.slurm.SlurmJob;
import java.util.Optional;

/**
 * What is true now for one placement (today one pod; the unit groups build on): the pod as the
 * informer has it, its placeholder job as the Slurm cache has it, and what the extender itself has
 * in flight. Nothing here depends on which transitions were seen.
 *
 * @param pod where the pod stands
 * @param boundNode the node it is bound to (BOUND only)
 * @param job its placeholder job: the live one if any, else the latest that ended
 * @param own what the extender has in flight for it (submitting, submitted, rejected, backing off)
 * @param submittedNotSeen a job Slurm accepted for it that the cache has not shown yet
 * @param unusableNode why the node Slurm allocated cannot take the pod (cordoned, drained), if so
 * @param retryDue whether a failed submission's backoff has passed
 * @param woken whether the pod was already woken for this job
 */
public record PlacementFacts(
    PodStanding pod,
    String boundNode,
    Optional<SlurmJob> job,
    Optional<PlaceholderState> own,
    Optional<Long> submittedNotSeen,
    Optional<String> unusableNode,
    boolean retryDue,
    boolean woken) {

  /** Where a pod stands, as far as its placeholder cares. */
  public enum PodStanding {
    /** No such pod (deleted, or never seen by the informer). */
    ABSENT,
    /** Succeeded or Failed: its containers are gone. */
    TERMINAL,
    /** Not bound and being deleted: no container will ever run. */
    DELETING_UNBOUND,
    /** Not bound yet. */
    PENDING,
    /** Bound to a node: its containers run, or will. */
    BOUND,
    /**
     * Bound and being deleted: its containers may still run, so its job is kept until the pod is
     * gone or terminal.
     */
    TERMINATING
  }
}
