package io.kse.extender.lifecycle;

import io.kse.extender.lifecycle.GroupMembership.PodGroupSpec;
import java.util.Optional;

/** PodGroups (scheduling.k8s.io, the Workload API) as an informer holds them. */
@FunctionalInterface
public interface PodGroupSource {
  Optional<PodGroupSpec> podGroup(String namespace, String name);

  /** The Workload API is not served: no pod names a PodGroup that exists. */
  static PodGroupSource none() {
    return (namespace, name) -> Optional.empty();
  }
}
