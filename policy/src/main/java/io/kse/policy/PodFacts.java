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
 * @param draGpus GPUs the pod asks through DRA ResourceClaims of a GPU device class (the extender
 *     allocates those claims from the GPUs Slurm gives the placeholder)
 * @param nodeSelector the pod's {@code spec.nodeSelector}: a TPU pod names its slice there
 * @param draGpuShares shares of one GPU the pod asks through ResourceClaims (issue 46)
 * @param draMigDevices MIG devices the pod asks through ResourceClaims, by profile (issue 46)
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
    OptionalLong activeDeadlineSeconds,
    long draGpus,
    Map<String, String> nodeSelector,
    long draGpuShares,
    Map<String, Long> draMigDevices) {

  public static final String GPU = "nvidia.com/gpu";

  public PodFacts {
    labels = Map.copyOf(labels);
    annotations = Map.copyOf(annotations);
    extendedResources = Map.copyOf(extendedResources);
    nodeSelector = Map.copyOf(nodeSelector);
    draMigDevices = Map.copyOf(draMigDevices);
  }

  /** The same without MIG devices. */
  public PodFacts(
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
      OptionalLong activeDeadlineSeconds,
      long draGpus,
      Map<String, String> nodeSelector,
      long draGpuShares) {
    this(
        namespace,
        name,
        uid,
        labels,
        annotations,
        priorityClassName,
        priority,
        owner,
        cpuMillis,
        memoryBytes,
        extendedResources,
        activeDeadlineSeconds,
        draGpus,
        nodeSelector,
        draGpuShares,
        Map.of());
  }

  /** A pod that asks no GPU through DRA and selects no nodes. */
  public PodFacts(
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
    this(
        namespace,
        name,
        uid,
        labels,
        annotations,
        priorityClassName,
        priority,
        owner,
        cpuMillis,
        memoryBytes,
        extendedResources,
        activeDeadlineSeconds,
        0,
        Map.of(),
        0);
  }

  /** This pod, asking {@code gpus} GPUs through DRA ResourceClaims. */
  public PodFacts withDraGpus(long gpus) {
    return with(gpus, nodeSelector, draGpuShares, draMigDevices);
  }

  /** This pod, asking {@code shares} of one GPU through DRA ResourceClaims. */
  public PodFacts withDraGpuShares(long shares) {
    return with(draGpus, nodeSelector, shares, draMigDevices);
  }

  /** This pod, asking these MIG devices (profile → count) through DRA ResourceClaims. */
  public PodFacts withDraMigDevices(Map<String, Long> mig) {
    return with(draGpus, nodeSelector, draGpuShares, mig);
  }

  /** This pod, with {@code spec.nodeSelector} {@code selector}. */
  public PodFacts withNodeSelector(Map<String, String> selector) {
    return with(draGpus, selector, draGpuShares, draMigDevices);
  }

  /** This pod with what the extender learns besides its manifest: its claims and selector. */
  private PodFacts with(
      long dra, Map<String, String> selector, long shares, Map<String, Long> mig) {
    return new PodFacts(
        namespace,
        name,
        uid,
        labels,
        annotations,
        priorityClassName,
        priority,
        owner,
        cpuMillis,
        memoryBytes,
        extendedResources,
        activeDeadlineSeconds,
        dra,
        selector,
        shares,
        mig);
  }

  /** Every GPU the pod asks, however it asks them: what its placeholder holds per node. */
  public long gpus() {
    return devicePluginGpus() + draGpus;
  }

  /**
   * GPUs asked as the extended resource {@code nvidia.com/gpu}: the kubelet's device plugin picks
   * them.
   */
  public long devicePluginGpus() {
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
