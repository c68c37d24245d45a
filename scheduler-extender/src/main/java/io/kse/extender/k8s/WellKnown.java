package io.kse.extender.k8s;

/** Annotation keys and Event reasons this extender writes. */
public final class WellKnown {
  /** The Slurm job id of the pod's placeholder. */
  public static final String JOB_ANNOTATION = "kse.io/slurm-job";

  /** The node Slurm allocated (written when the pod is woken). */
  public static final String NODE_ANNOTATION = "kse.io/slurm-node";

  /**
   * The scheduling gate manifests/base/scheduling-gate.yaml puts on new pods of our scheduler; the
   * extender lifts it once Slurm allocated.
   */
  public static final String SCHEDULING_GATE = "kse.io/slurm-allocation";

  /**
   * Our pod condition: False with Slurm's pending reason while the pod waits, True once Slurm
   * allocated its node.
   */
  public static final String CONDITION = "kse.io/SlurmAllocated";

  public static final String SUBMITTED = "SlurmJobSubmitted";
  public static final String SUBMIT_FAILED = "SlurmJobSubmitFailed";
  public static final String REJECTED = "PlacementRejected";
  public static final String ALLOCATED = "AllocatedBySlurm";
  public static final String BOUND = "BoundToSlurmNode";
  public static final String BIND_FAILED = "BindFailed";
  public static final String JOB_ENDED = "SlurmJobEnded";

  /** Slurm allocated a node the pod can no longer go to (cordoned, drained): job replaced. */
  public static final String NODE_UNUSABLE = "AllocatedNodeUnusable";

  /** A PodDisruptionBudget refused the eviction of a pod whose job ended. */
  public static final String EVICTION_BLOCKED = "EvictionBlocked";

  /** The pod waits on Slurm: the reason changed. */
  public static final String WAITING = "WaitingForSlurm";

  /** Slurm preempted a job for this pod's placeholder. */
  public static final String PREEMPTED = "PreemptedSlurmJob";

  private WellKnown() {}
}
