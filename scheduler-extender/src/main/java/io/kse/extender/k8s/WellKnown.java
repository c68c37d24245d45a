package io.kse.extender.k8s;

/**
 * Annotation keys, the condition and the scheduling gate this extender writes (Events: {@link
 * EventReason}).
 */
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

  private WellKnown() {}
}
