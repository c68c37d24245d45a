package io.kse.extender.k8s;

/** What the extender does to pods besides binding: Events, wake-up annotations, eviction. */
public interface PodActions {
  /** Records a Kubernetes Event on the pod (Warning or Normal as the reason says). */
  void event(PodRef pod, EventReason reason, String message);

  /**
   * The same, for something that happened at {@code at} and is said later ({@link QuietEvents}).
   */
  default void event(PodRef pod, EventReason reason, String message, java.time.Instant at) {
    event(pod, reason, message);
  }

  /** How a wake-up writes the pod: each write is an API request, so no more than says something. */
  enum WakeUp {
    /**
     * A pod no longer gated (its job moved before it bound): one status write — the annotations,
     * the nomination and the {@value WellKnown#CONDITION} condition.
     */
    NOMINATE,
    /**
     * That status write, then the gate's lift: for a pod told it waits (its condition must turn),
     * or a cluster where kube-scheduler filtering every node costs more than the write.
     */
    NOMINATE_THEN_UNGATE,
    /** One write of the pod itself: the annotations with the gate's lift; no status. */
    UNGATE;

    public boolean lifts() {
      return this != NOMINATE;
    }
  }

  /**
   * Nudges kube-scheduler to schedule the pod now on {@code node}: records the job and node in
   * annotations (a pod update, which also requeues a pod an extender rejected) and, as {@code how}
   * says, nominates the node ({@code nominatedNodeName}: kube-scheduler tries that node alone
   * first) with the {@value WellKnown#CONDITION} condition set to allocated, and lifts our
   * scheduling gate. False when the pod could not be updated (to be tried again).
   */
  boolean wake(PodRef pod, String node, long jobId, WakeUp how);

  /**
   * Lifts our scheduling gate without a node (the policy rejected the pod): kube-scheduler then
   * shows the filter's reason in the pod's PodScheduled condition.
   */
  void ungate(PodRef pod);

  /** How an eviction ended. */
  enum EvictResult {
    EVICTED,
    /** 404 or a UID mismatch: that pod is already gone. */
    GONE,
    /** 429: a PodDisruptionBudget refused it for now. */
    BLOCKED_BY_PDB,
    FAILED
  }

  /** Evicts the pod (Eviction API, so PodDisruptionBudgets apply) with a reason. */
  EvictResult evict(PodRef pod, String reason);

  /**
   * Deletes the pod (graceful, UID precondition), past any PodDisruptionBudget: only for a pod
   * whose GPUs Slurm has already given to another job. True when deleted or already gone.
   */
  boolean delete(PodRef pod, String reason);

  /**
   * Sets the pod's {@value WellKnown#CONDITION} condition, where {@code kubectl describe pod} shows
   * why it waits: {@code allocated} true once Slurm allocated its node.
   */
  void condition(PodRef pod, boolean allocated, String reason, String message);

  /** Does nothing: for the HTTP tests and benchmarks, where only the verbs matter. */
  static PodActions none() {
    return new PodActions() {
      @Override
      public void event(PodRef pod, EventReason reason, String message) {}

      @Override
      public boolean wake(PodRef pod, String node, long jobId, WakeUp how) {
        return true;
      }

      @Override
      public void ungate(PodRef pod) {}

      @Override
      public EvictResult evict(PodRef pod, String reason) {
        return EvictResult.EVICTED;
      }

      @Override
      public boolean delete(PodRef pod, String reason) {
        return true;
      }

      @Override
      public void condition(PodRef pod, boolean allocated, String reason, String message) {}
    };
  }
}
