package io.kse.extender.lifecycle;

import io.fabric8.kubernetes.api.model.Pod;
import io.kse.extender.k8s.PodActions.WakeUp;
import io.kse.extender.k8s.WellKnown;
import java.util.function.IntSupplier;

/**
 * How a woken pod is written. Nominating Slurm's node costs a status write per pod; it pays where
 * kube-scheduler would otherwise filter many nodes for the pod (it filters a nominated node alone
 * first), and it is needed where the pod was told it waits (its condition must turn). Everywhere
 * else one write — the annotations with the gate's lift — wakes the pod: our filter passes only
 * Slurm's node whatever kube-scheduler tries.
 *
 * @param kubernetesNodes how many nodes the cluster has now
 * @param nominateFromNodes from this many nodes every woken pod is nominated (0: always)
 */
record WakeWrites(IntSupplier kubernetesNodes, int nominateFromNodes) {
  /**
   * @param toldMeanwhile this extender told the pod it waits (its informer may not show it yet)
   */
  WakeUp of(Pod pod, boolean toldMeanwhile) {
    if (!gated(pod)) {
      return WakeUp.NOMINATE;
    }
    return toldMeanwhile || toldWaiting(pod) || kubernetesNodes.getAsInt() >= nominateFromNodes
        ? WakeUp.NOMINATE_THEN_UNGATE
        : WakeUp.UNGATE;
  }

  /** The pod carries our condition: whatever it says, it must say allocated now. */
  static boolean toldWaiting(Pod pod) {
    return pod.getStatus() != null
        && pod.getStatus().getConditions() != null
        && pod.getStatus().getConditions().stream()
            .anyMatch(c -> WellKnown.CONDITION.equals(c.getType()));
  }

  /** Held by our scheduling gate (manifests/base/scheduling-gate.yaml). */
  private static boolean gated(Pod p) {
    return p.getSpec().getSchedulingGates() != null
        && p.getSpec().getSchedulingGates().stream()
            .anyMatch(g -> WellKnown.SCHEDULING_GATE.equals(g.getName()));
  }
}
