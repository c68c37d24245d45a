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
 */
public record ClusterSpec(
    PreemptMode preemptMode,
    String gpuGres,
    Optional<String> gpuType,
    List<String> nvlinkDomainFeatures,
    boolean switches,
    boolean blocks,
    Map<String, String> extendedResources) {

  public enum PreemptMode {
    PARTITION,
    QOS
  }

  public ClusterSpec {
    nvlinkDomainFeatures = List.copyOf(nvlinkDomainFeatures);
    extendedResources = Map.copyOf(extendedResources);
  }
}
