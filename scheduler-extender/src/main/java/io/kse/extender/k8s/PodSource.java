package io.kse.extender.k8s;

import io.fabric8.kubernetes.api.model.Pod;
import java.util.List;
import java.util.Optional;

/** Pods as the informer sees them (no API call). */
public interface PodSource {
  Optional<Pod> pod(String namespace, String name);

  /** Every pod of our scheduler name the informer holds. */
  List<Pod> pods();

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
