package io.kse.extender.lifecycle;

/**
 * Why a member pod waits: the reason of its {@code kse.io/SlurmAllocated=False} condition (the
 * rules decide it, the reconciler writes it; troubleshooting.md explains each).
 */
public enum WaitReason {
  /** Its placeholder waits in Slurm's queue (Slurm's own reason in the message). */
  SLURM_PENDING("SlurmPending"),
  /**
   * Its placeholder is held in Slurm's queue behind another of ours pending in its partition, so
   * that Slurm preempts for one at a time (issue 60).
   */
  QUEUED_BEHIND("QueuedBehindPlaceholder"),
  /** Its placeholder was chosen for preemption while other members still run on it. */
  SLURM_PREEMPTING("SlurmPreempting"),
  /** Its group cannot be placed as it is (members disagree on size, index…). */
  GROUP_INVALID("GroupInvalid"),
  /** Its group's controller has not created every member yet. */
  GROUP_INCOMPLETE("GroupIncomplete"),
  /** Its group's job no longer fits the group, and members still run on it. */
  SHAPE_CHANGED("ShapeChanged"),
  /** Submitting the placeholder failed; retried with backoff. */
  SUBMIT_FAILED("SubmitFailed"),
  /**
   * Slurm is unreachable while this replica, the writer since a moment ago, has not yet read
   * slurmctld's job table: nothing is submitted until it has (a job the previous writer made would
   * otherwise be made twice).
   */
  SLURM_UNREACHABLE("SlurmUnreachable");

  private final String reason;

  WaitReason(String reason) {
    this.reason = reason;
  }

  /** The condition's {@code reason}. */
  public String reason() {
    return reason;
  }
}
