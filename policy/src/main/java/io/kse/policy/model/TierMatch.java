package io.kse.policy.model;

import java.util.List;
import java.util.Map;
import java.util.OptionalInt;

/**
 * Which pods a tier takes. Every given criterion must hold; a list matches when any element does.
 *
 * @param priorityMin inclusive lower bound of {@code spec.priority}
 * @param priorityMax inclusive upper bound of {@code spec.priority}
 * @param labels labels the pod must carry with exactly these values
 * @param annotations annotations the pod must carry with exactly these values
 */
public record TierMatch(
    List<String> priorityClassNames,
    OptionalInt priorityMin,
    OptionalInt priorityMax,
    List<String> namespaces,
    Map<String, String> labels,
    Map<String, String> annotations) {

  public TierMatch {
    priorityClassNames = List.copyOf(priorityClassNames);
    namespaces = List.copyOf(namespaces);
    labels = Map.copyOf(labels);
    annotations = Map.copyOf(annotations);
  }
}
