package io.kse.extender.k8s;

import io.fabric8.kubernetes.api.model.Pod;
import java.util.List;
import java.util.Optional;

/** Pods as the informer sees them (no API call). */
public interface PodSource {
  Optional<Pod> pod(String namespace, String name);

  /** The pod with exactly this namespace, name and UID (a recreated pod of that name is not it). */
  default Optional<Pod> pod(PodRef ref) {
    return pod(ref.namespace(), ref.name()).filter(p -> ref.uid().equals(p.getMetadata().getUid()));
  }

  /** Every pod of our scheduler name the informer holds. */
  List<Pod> pods();

  /**
   * Our pods bound to Kubernetes node {@code node}. This default reads them all; the informer
   * answers from an index, so a question about one node does not cost the whole cluster's pods.
   */
  default List<Pod> podsOn(String node) {
    return pods().stream()
        .filter(p -> p.getSpec() != null && node.equals(p.getSpec().getNodeName()))
        .toList();
  }

  /** No pods: for benchmarks of the verbs alone. */
  static PodSource none() {
    return new PodSource() {
      @Override
      public Optional<Pod> pod(String namespace, String name) {
        return Optional.empty();
      }

      @Override
      public List<Pod> pods() {
        return List.of();
      }
    };
  }
}
