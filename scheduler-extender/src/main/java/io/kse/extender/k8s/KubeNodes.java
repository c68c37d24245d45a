package io.kse.extender.k8s;

import java.util.Collection;
import java.util.Optional;

/**
 * Kubernetes nodes as the drain sync and the topology check need them, and the one change the sync
 * makes to them: a taint.
 */
public interface KubeNodes {
  /**
   * @param ourTaint the value of our {@value WellKnown#TAINT_KEY} taint, if the node has it
   * @param labels its labels (the topology ones are compared with Slurm's)
   */
  record KubeNode(
      String name,
      boolean cordoned,
      Optional<String> ourTaint,
      java.util.Map<String, String> labels) {
    public KubeNode {
      labels = java.util.Map.copyOf(labels);
    }

    public KubeNode(String name, boolean cordoned, Optional<String> ourTaint) {
      this(name, cordoned, ourTaint, java.util.Map.of());
    }
  }

  Collection<KubeNode> nodes();

  Optional<KubeNode> node(String name);

  /** Adds (or updates) our NoSchedule taint with this value; false when the API refused. */
  boolean taint(String node, String value);

  /** Removes our taint, and only ours; false when the API refused. */
  boolean untaint(String node);

  /**
   * Sets (a value) or removes (empty) these labels and no other; false when the API refused. Only
   * the opt-in topology label sync calls it.
   */
  default boolean label(String node, java.util.Map<String, Optional<String>> labels) {
    return false;
  }
}
