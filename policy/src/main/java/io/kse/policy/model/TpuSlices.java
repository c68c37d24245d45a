package io.kse.policy.model;

import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The TPU slices the cluster has, as GKE's multi-host TPU contract names them: a pod asks {@code
 * google.com/tpu} chips per host and selects its slice by two node labels, the accelerator type and
 * the slice topology (e.g. {@code tpu-v5p-slice}, {@code 2x2x4}). In Slurm each slice is one
 * topology/block block of hosts carrying {@code Gres=tpu:N} and the slice's feature.
 *
 * @param resource the Kubernetes extended resource of TPU chips
 * @param gres the Slurm GRES name of TPU chips
 * @param acceleratorLabel the node label naming the accelerator type
 * @param topologyLabel the node label naming the slice topology
 * @param accelerators accelerator types by their label value
 */
public record TpuSlices(
    String resource,
    String gres,
    String acceleratorLabel,
    String topologyLabel,
    Map<String, Accelerator> accelerators) {
  public static final String GKE_RESOURCE = "google.com/tpu";
  public static final String GKE_ACCELERATOR_LABEL = "cloud.google.com/gke-tpu-accelerator";
  public static final String GKE_TOPOLOGY_LABEL = "cloud.google.com/gke-tpu-topology";

  public TpuSlices {
    accelerators = Map.copyOf(accelerators);
  }

  /**
   * One accelerator type.
   *
   * @param chipsPerHost TPU chips on each host (a multi-host slice uses all of them)
   * @param feature the Slurm node feature prefix: the hosts of a slice of topology T carry the
   *     feature {@code feature-T} (e.g. {@code tpu-v5p-2x2x4})
   * @param topologies the slice topologies the cluster has for this type
   */
  public record Accelerator(int chipsPerHost, String feature, List<String> topologies) {
    public Accelerator {
      topologies = List.copyOf(topologies);
    }

    /** The Slurm feature on every host of a slice of {@code topology}. */
    public String featureOf(String topology) {
      return feature + "-" + topology;
    }
  }

  public Optional<Accelerator> accelerator(String type) {
    return Optional.ofNullable(accelerators.get(type));
  }
}
