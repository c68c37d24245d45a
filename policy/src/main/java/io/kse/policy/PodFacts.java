package io.kse.policy;

import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;

/**
 * What the policy may know about a pod: identity, labels and annotations, priority, owner, and its
 * resource requests summed the way the kube-scheduler sums them (init containers at their max).
 *
 * @param cpuMillis requested CPU, millicores
 * @param memoryBytes requested memory, bytes
 * @param extendedResources extended resources by name, e.g. {@code nvidia.com/gpu -> 4}
 * @param owner the controlling owner, e.g. {@code ReplicaSet/llm-00001-deployment-6d9f}
 */
public record PodFacts(
    String namespace,
    String name,
    String uid,
    Map<String, String> labels,
    Map<String, String> annotations,
    Optional<String> priorityClassName,
    OptionalInt priority,
    Optional<String> owner,
    long cpuMillis,
    long memoryBytes,
    Map<String, Long> extendedResources,
    OptionalLong activeDeadlineSeconds) {

  public static final String GPU = "nvidia.com/gpu";

  public PodFacts {
    labels = Map.copyOf(labels);
    annotations = Map.copyOf(annotations);
    extendedResources = Map.copyOf(extendedResources);
  }

  public long gpus() {
    return extendedResources.getOrDefault(GPU, 0L);
  }

  /** The Knative Service this pod serves, if it is a Knative revision pod. */
  public Optional<String> knativeService() {
    return Optional.ofNullable(labels.get("serving.knative.dev/service"));
  }

  public String ref() {
    return namespace + "/" + name;
  }
}
