package io.kse.extender.lifecycle;

import io.kse.extender.lifecycle.GroupMembership.PodGroupSpec;
import java.util.Optional;

/** PodGroups (scheduling.k8s.io, the Workload API) as an informer holds them. */
@FunctionalInterface
public interface PodGroupSource {
  Optional<PodGroupSpec> podGroup(String namespace, String name);

  /**
   * Sets the PodGroup's {@code PodGroupInitiallyScheduled} condition True (every member bound); the
   * kube-scheduler's gang plugin would, but our profile leaves gangs to the extender.
   */
  default void markScheduled(String namespace, String name, String message) {}

  /** The Workload API is not served: no pod names a PodGroup that exists. */
  static PodGroupSource none() {
    return (namespace, name) -> Optional.empty();
  }
}
