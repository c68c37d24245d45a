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
 * @param nvlinkDomainNodes how many nodes one NVLink domain has (0: not said); a group larger than
 *     this that asks for one domain is refused with that reason instead of pending forever
 * @param nvlinkDomainTopologyKeys Kubernetes topology keys (node labels) that name an NVLink
 *     domain, e.g. {@code nvidia.com/gpu.clique}: a LeaderWorkerSet exclusive-topology or a
 *     PodGroup topology constraint on one of them asks for one NVLink domain
 * @param switches whether topology/tree switches may be requested (needs slurmrestd v0.0.41+)
 * @param blocks whether topology/block segments may be requested (Slurm 23.11+)
 * @param extendedResources Kubernetes extended resources that are Slurm GRES, e.g. {@code
 *     example.com/fpga -> fpga}
 * @param gpusPerNode how many GPUs each GPU node has (0: not said); a device-plugin pod asking them
 *     all holds its node whole without an exclusive placeholder
 * @param kubernetesOnlyResources extended resources that Kubernetes alone accounts for (the
 *     placeholder does not hold them), e.g. {@code hugepages-2Mi}; a trailing {@code *} matches a
 *     prefix. Any other resource no GRES maps to is refused: Slurm would place the pod on a node
 *     that may not have it.
 * @param tpu the TPU slices the cluster has, if any (see {@link TpuSlices})
 * @param gpuShares how part of a GPU is asked and held, if pods may share GPUs ({@link GpuShares})
 * @param migProfiles MIG devices (issue 46): the profile a ResourceClaim asks (the DRA driver's
 *     {@code profile} attribute, e.g. {@code 1g.10gb}) → the Slurm GRES type of that MIG slice
 *     (e.g. {@code h100_1g.10gb}): a pod's MIG device becomes {@code gpu:<type>:1} on its
 *     placeholder
 */
public record ClusterSpec(
    PreemptMode preemptMode,
    String gpuGres,
    Optional<String> gpuType,
    List<String> nvlinkDomainFeatures,
    int nvlinkDomainNodes,
    List<String> nvlinkDomainTopologyKeys,
    boolean switches,
    boolean blocks,
    Map<String, String> extendedResources,
    List<String> kubernetesOnlyResources,
    int gpusPerNode,
    Optional<TpuSlices> tpu,
    Optional<GpuShares> gpuShares,
    Map<String, String> migProfiles) {

  /** The topology key GPU Operator / the NVIDIA DRA driver label GB200 NVLink domains with. */
  public static final String NVIDIA_CLIQUE_LABEL = "nvidia.com/gpu.clique";

  public enum PreemptMode {
    PARTITION,
    QOS
  }

  public ClusterSpec {
    nvlinkDomainFeatures = List.copyOf(nvlinkDomainFeatures);
    nvlinkDomainTopologyKeys = List.copyOf(nvlinkDomainTopologyKeys);
    extendedResources = Map.copyOf(extendedResources);
    kubernetesOnlyResources = List.copyOf(kubernetesOnlyResources);
    migProfiles = Map.copyOf(migProfiles);
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
