package io.kse.extender.k8s;

/**
 * Every Kubernetes Event reason the extender posts, with its type: the one list users, docs and
 * tests read (troubleshooting.md explains each).
 */
public enum EventReason {
  SUBMITTED("SlurmJobSubmitted", false),
  SUBMIT_FAILED("SlurmJobSubmitFailed", true),
  REJECTED("PlacementRejected", true),
  ALLOCATED("AllocatedBySlurm", false),
  BOUND("BoundToSlurmNode", false),
  /** The pod's ResourceClaims were allocated the GPUs Slurm gave its placeholder. */
  GPUS_ALLOCATED("GpusAllocatedFromSlurm", false),
  BIND_FAILED("BindFailed", true),
  /** The job ended or lost its nodes: a bound pod is evicted, a pending one gets a new job. */
  JOB_ENDED("SlurmJobEnded", true),
  /** Slurm allocated a node the pod can no longer go to (cordoned, drained): job replaced. */
  NODE_UNUSABLE("AllocatedNodeUnusable", true),
  /**
   * The placement changed shape after its job was submitted (the group's size, a member's GPUs, a
   * group made invalid) and nothing runs on the job: it is cancelled, a job of the new shape
   * follows.
   */
  SHAPE_CHANGED("PlacementShapeChanged", true),
  /**
   * Slurm chose a bound pod's placeholder for preemption: the pod is evicted while the placeholder
   * holds its node within its grace time.
   */
  PREEMPTING("SlurmPreemptingPlaceholder", true),
  /**
   * A bound pod stays Terminating long past its deadline: its placeholder is kept, its GPUs may
   * still be in use.
   */
  HELD_FOR_TERMINATING("PlaceholderHeldForTerminatingPod", true),
  /** A PodDisruptionBudget refused the eviction of a pod whose job ended. */
  EVICTION_BLOCKED("EvictionBlocked", true),
  /** The pod waits on Slurm: the reason changed. */
  WAITING("WaitingForSlurm", false),
  /** Slurm preempted a job for this pod's placeholder. */
  PREEMPTED("PreemptedSlurmJob", false),
  /** Two Kubernetes nodes claim one Slurm node (on the nodes). */
  NODE_MAPPING_CONFLICT("SlurmNodeMappingConflict", true),
  /** Kubernetes' topology labels on a node disagree with Slurm's features (on the node). */
  TOPOLOGY_DRIFT("TopologyDrift", true);

  private final String reason;
  private final boolean warning;

  EventReason(String reason, boolean warning) {
    this.reason = reason;
    this.warning = warning;
  }

  /** The Event's {@code reason}. */
  public String reason() {
    return reason;
  }

  /** {@code Warning} rather than {@code Normal}. */
  public boolean warning() {
    return warning;
  }
}
