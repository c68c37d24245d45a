package io.kse.policy;

import io.kse.policy.model.TierMatch;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * Whether a pod matches a tier's rule — every condition the rule sets must hold — and, when it
 * does, the account of why that the decision's record shows.
 */
final class TierMatching {
  private TierMatching() {}

  /** Empty when the pod does not match; else a short account of why it does. */
  static Optional<String> matches(TierMatch m, PodFacts pod) {
    List<String> why = new ArrayList<>();
    if (!m.priorityClassNames().isEmpty()) {
      if (pod.priorityClassName().isEmpty()
          || !m.priorityClassNames().contains(pod.priorityClassName().get())) {
        return Optional.empty();
      }
      why.add("priorityClassName=" + pod.priorityClassName().get());
    }
    if (m.priorityMin().isPresent() || m.priorityMax().isPresent()) {
      if (pod.priority().isEmpty()) {
        return Optional.empty();
      }
      int p = pod.priority().getAsInt();
      if (m.priorityMin().isPresent() && p < m.priorityMin().getAsInt()
          || m.priorityMax().isPresent() && p > m.priorityMax().getAsInt()) {
        return Optional.empty();
      }
      why.add("priority=" + p);
    }
    if (!m.namespaces().isEmpty()) {
      if (!m.namespaces().contains(pod.namespace())) {
        return Optional.empty();
      }
      why.add("namespace=" + pod.namespace());
    }
    for (Map.Entry<String, String> e : new TreeMap<>(m.labels()).entrySet()) {
      if (!e.getValue().equals(pod.labels().get(e.getKey()))) {
        return Optional.empty();
      }
      why.add("label " + e.getKey() + "=" + e.getValue());
    }
    for (Map.Entry<String, String> e : new TreeMap<>(m.annotations()).entrySet()) {
      if (!e.getValue().equals(pod.annotations().get(e.getKey()))) {
        return Optional.empty();
      }
      why.add("annotation " + e.getKey() + "=" + e.getValue());
    }
    return Optional.of(String.join(", ", why));
  }
}
