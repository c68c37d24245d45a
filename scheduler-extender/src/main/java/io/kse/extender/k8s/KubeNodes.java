package io.kse.extender.k8s;

import java.util.Collection;
import java.util.Optional;

/** Kubernetes nodes as the drain sync needs them, and the one change it makes to them: a taint. */
public interface KubeNodes {
  /**
   * @param ourTaint the value of our {@value WellKnown#TAINT_KEY} taint, if the node has it
   */
  record KubeNode(String name, boolean cordoned, Optional<String> ourTaint) {}

  Collection<KubeNode> nodes();

  Optional<KubeNode> node(String name);

  /** Adds (or updates) our NoSchedule taint with this value; false when the API refused. */
  boolean taint(String node, String value);

  /** Removes our taint, and only ours; false when the API refused. */
  boolean untaint(String node);
}
