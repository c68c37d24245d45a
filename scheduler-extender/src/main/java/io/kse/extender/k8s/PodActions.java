package io.kse.extender.k8s;

import io.kse.extender.wire.PodRef;

/** What the extender does to pods besides binding: Events, wake-up annotations, eviction. */
public interface PodActions {
  /** Records a Kubernetes Event on the pod ({@code warning} for trouble). */
  void event(PodRef pod, boolean warning, String reason, String message);

  /**
   * Nudges kube-scheduler to retry the pod now: an annotation change is a pod update, which
   * requeues pods an extender rejected, and {@code nominatedNodeName} steers it to {@code node}.
   */
  void wake(PodRef pod, String node, long jobId);

  /** Evicts the pod (Eviction API, so PodDisruptionBudgets apply) with a reason. */
  void evict(PodRef pod, String reason);
}
