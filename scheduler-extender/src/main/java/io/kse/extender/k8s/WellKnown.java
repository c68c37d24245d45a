package io.kse.extender.k8s;

/**
 * The keys this extender writes or reads on Kubernetes objects: annotations, the condition, the
 * scheduling gate, our taint and the node label (Events: {@link EventReason}; a group's keys are
 * the policy's, {@link io.kse.policy.WellKnown}).
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
   * A pod's ResourceClaimTemplate for a share of a GPU, for controllers that cannot put claims in
   * their pods (Knative): manifests/base/gpu-share-claims.yaml adds the claim at creation.
   */
  public static final String GPU_SHARE_TEMPLATE = "kse.io/gpu-share-template";

  /**
   * Our pod condition: False with Slurm's pending reason while the pod waits, True once Slurm
   * allocated its node.
   */
  public static final String CONDITION = "kse.io/SlurmAllocated";

  /**
   * Our NoSchedule taint on a Kubernetes node whose Slurm node takes no new work (value: its state,
   * e.g. {@code down}, {@code drain}), set and lifted by {@link NodeSync}.
   */
  public static final String TAINT_KEY = "kse.io/slurm-unavailable";

  /** On a Kubernetes node, the Slurm node it is, when the names differ ({@link NodeNames}). */
  public static final String SLURM_NODE_LABEL = "node-restriction.kubernetes.io/kse-slurm-node";

  private WellKnown() {}
}
