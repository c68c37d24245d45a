package io.kse.extender.lifecycle;

/**
 * Why a pod waits, said once: the reason and sentence of its {@code kse.io/SlurmAllocated=False}
 * condition and its Events (the rules decide when), and of kube-scheduler's filter answer (with
 * {@code kse: } before it). Every sentence a waiting pod can be given is made here, so the pod, its
 * Events, {@code /explain} (which shows the condition) and filter never say it two ways.
 */
public record WhyWaiting(WaitReason reason, String message) {

  /** Its group cannot be placed as it is (members disagree on size, index…). */
  public static WhyWaiting groupInvalid(String group, String problem) {
    return new WhyWaiting(
        WaitReason.GROUP_INVALID, "group " + group + " cannot be placed as it is: " + problem);
  }

  /** Its group's controller has not created every member yet. */
  public static WhyWaiting groupIncomplete(String group, long present, int size) {
    return new WhyWaiting(
        WaitReason.GROUP_INCOMPLETE,
        "group "
            + group
            + " has "
            + present
            + " of its "
            + size
            + " members; its Slurm placeholder is submitted once all exist, and holds no node"
            + " until then");
  }

  /** Its placeholder waits in Slurm's queue, for Slurm's reason. */
  public static WhyWaiting slurmPending(long jobId, String slurmReason) {
    return new WhyWaiting(
        WaitReason.SLURM_PENDING, "waiting for Slurm job " + jobId + " (" + slurmReason + ")");
  }

  /** Its placeholder is held behind {@code leader}, another of ours pending in its partition. */
  public static WhyWaiting queuedBehind(long jobId, long leader, String partition) {
    return new WhyWaiting(
        WaitReason.QUEUED_BEHIND,
        "Slurm job "
            + jobId
            + " is held behind placeholder job "
            + leader
            + ", pending in partition "
            + partition
            + ": Slurm preempts for one of them at a time, and this one follows onto what that"
            + " freed (released when it starts)");
  }

  /** Its placeholder was submitted and is not in the cache yet. */
  public static WhyWaiting submitted(long jobId) {
    return slurmPending(jobId, "submitted");
  }

  /** Submitting its placeholder failed; retried with backoff. */
  public static WhyWaiting submitFailed(String why) {
    return new WhyWaiting(
        WaitReason.SUBMIT_FAILED, "the Slurm placeholder could not be submitted: " + why);
  }

  /** Its placeholder was chosen for preemption while other members still run on it. */
  public static WhyWaiting preempting(long jobId) {
    return new WhyWaiting(
        WaitReason.SLURM_PREEMPTING,
        "Slurm job "
            + jobId
            + " is being preempted; a new placeholder follows once the running members have"
            + " stopped");
  }

  /** Its group's job no longer fits the group, and members still run on it. */
  public static WhyWaiting shapeChanged(String misfit) {
    return new WhyWaiting(
        WaitReason.SHAPE_CHANGED,
        misfit + "; a placeholder of the new shape follows once the running members have stopped");
  }

  /** Slurm is unreachable while a new writer has not read Slurm's jobs yet. */
  public static WhyWaiting slurmUnreachable(String error) {
    return new WhyWaiting(
        WaitReason.SLURM_UNREACHABLE,
        "Slurm is unreachable ("
            + error
            + "); this replica became the writer and submits placeholders once it has read"
            + " Slurm's jobs");
  }

  /** As kube-scheduler's filter says it. */
  public String filterReason() {
    return "kse: " + message;
  }
}
