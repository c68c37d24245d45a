package io.kse.extender.lifecycle;

import io.kse.extender.k8s.PodRef;
import java.util.List;

/**
 * The unit the reconciler keeps: one or more pods that share one placeholder job. A pod of its own
 * is a placement of one, keyed by its UID; a multi-node group (LeaderWorkerSet, Workload API,
 * {@code kse.io/group}) is one placement whose members are its pods in index order.
 *
 * @param key what the extender's own records (registry, backoff) are kept under
 * @param members the pods, member {@code i} going to the {@code i}-th node of the allocation
 */
public record Placement(String key, List<PodRef> members) {
  public Placement {
    members = List.copyOf(members);
    if (members.isEmpty()) {
      throw new IllegalArgumentException("a placement has at least one member");
    }
  }

  /** A pod of its own. */
  public static Placement of(PodRef pod) {
    return new Placement(pod.uid(), List.of(pod));
  }

  /** The pod whose identity the placeholder carries (a group's leader). */
  public PodRef first() {
    return members.get(0);
  }
}
