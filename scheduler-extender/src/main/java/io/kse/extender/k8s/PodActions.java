package io.kse.extender.k8s;

import io.kse.extender.wire.PodRef;

/** What the extender does to pods besides binding: Events, wake-up annotations, eviction. */
public interface PodActions {
  /** Records a Kubernetes Event on the pod ({@code warning} for trouble). */
  void event(PodRef pod, boolean warning, String reason, String message);

  /**
   * Nudges kube-scheduler to schedule the pod now: lifts our scheduling gate (if the admission
   * policy set one) and records the job and node in annotations — a pod update, which also requeues
   * a pod an extender rejected — and, unless the pod was {@code gated} (lifting the gate puts it
   * straight into the active queue), {@code nominatedNodeName} steers it to {@code node}.
   */
  void wake(PodRef pod, String node, long jobId, boolean gated);

  /**
   * Lifts our scheduling gate without a node (the policy rejected the pod): kube-scheduler then
   * shows the filter's reason in the pod's PodScheduled condition.
   */
  void ungate(PodRef pod);

  /** Evicts the pod (Eviction API, so PodDisruptionBudgets apply) with a reason. */
  void evict(PodRef pod, String reason);

  /** Does nothing: for the HTTP tests and benchmarks, where only the verbs matter. */
  static PodActions none() {
    return new PodActions() {
      @Override
      public void event(PodRef pod, boolean warning, String reason, String message) {}

      @Override
      public void wake(PodRef pod, String node, long jobId, boolean gated) {}

      @Override
      public void ungate(PodRef pod) {}

      @Override
      public void evict(PodRef pod, String reason) {}
    };
  }
}
