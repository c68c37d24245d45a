package io.kse.policy.model;

import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What the Slurm cluster offers, as far as placement needs to know.
 *
 * @param preemptMode how Slurm is configured to preempt: by partition PriorityTier or by QoS
 * @param gpuGres the GRES name of GPUs in Slurm (usually {@code gpu})
 * @param gpuType the GPU type in the GRES (e.g. {@code h100}); empty for untyped
 * @param nvlinkDomainFeatures node features naming NVLink domains (e.g. {@code nvl-0})
 * @param switches whether topology/tree switches may be requested (needs slurmrestd v0.0.41+)
 * @param blocks whether topology/block segments may be requested (Slurm 23.11+)
 * @param extendedResources Kubernetes extended resources that are Slurm GRES, e.g. {@code
 *     example.com/fpga -> fpga}
 * @param kubernetesOnlyResources extended resources that Kubernetes alone accounts for (the
 *     placeholder does not hold them), e.g. {@code hugepages-2Mi}; a trailing {@code *} matches a
 *     prefix. Any other resource no GRES maps to is refused: Slurm would place the pod on a node
 *     that may not have it.
 */
public record ClusterSpec(
    PreemptMode preemptMode,
    String gpuGres,
    Optional<String> gpuType,
    List<String> nvlinkDomainFeatures,
    boolean switches,
    boolean blocks,
    Map<String, String> extendedResources,
    List<String> kubernetesOnlyResources) {

  public enum PreemptMode {
    PARTITION,
    QOS
  }

  public ClusterSpec {
    nvlinkDomainFeatures = List.copyOf(nvlinkDomainFeatures);
    extendedResources = Map.copyOf(extendedResources);
    kubernetesOnlyResources = List.copyOf(kubernetesOnlyResources);
  }

  /** Whether Kubernetes alone accounts for this resource (listed, or matched by a prefix*). */
  public boolean kubernetesOnly(String resource) {
    for (String r : kubernetesOnlyResources) {
      if (r.endsWith("*")
          ? resource.startsWith(r.substring(0, r.length() - 1))
          : r.equals(resource)) {
        return true;
      }
    }
    return false;
  }
}
