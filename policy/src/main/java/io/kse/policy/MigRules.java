package io.kse.policy;

import io.kse.policy.model.ClusterSpec;
import io.kse.policy.model.Tier;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * MIG devices (issue 46): a pod asking MIG devices of a profile through a ResourceClaim gets a
 * placeholder asking as many GPUs of that profile's Slurm GRES type ({@code cluster.migProfiles}).
 * Slurm does not partition GPUs itself: the MIG slices are made beforehand and configured as typed
 * GRES; Slurm picks which one, and the extender gives the pod's claim that device.
 */
final class MigRules {
  private MigRules() {}

  /**
   * The GRES parts for the pod's MIG devices, e.g. {@code gpu:h100_1g.10gb:1}; none when it asks
   * none. Refused: a profile the policy does not map, a tier that may not share GPUs, MIG devices
   * beside whole GPUs or shares of one.
   */
  static List<String> gres(
      ClusterSpec cluster, PodFacts pod, Tier tier, List<Contribution> record) {
    Map<String, Long> asked = new TreeMap<>(pod.draMigDevices());
    asked.values().removeIf(n -> n <= 0);
    if (asked.isEmpty()) {
      return List.of();
    }
    String asks = "the pod asks MIG device(s) " + asked + " through a ResourceClaim";
    if (!tier.shareGpus()) {
      throw new PlacementPolicy.Rejected(
          asks + ", but tier " + tier.name() + " may not share GPUs (tiers[].shareGpus)");
    }
    if (pod.gpus() > 0 || pod.draGpuShares() > 0) {
      throw new PlacementPolicy.Rejected(
          asks + " and whole GPUs or shares of one; a pod takes one kind of GPU");
    }
    List<String> parts = new ArrayList<>();
    for (Map.Entry<String, Long> e : asked.entrySet()) {
      String type = cluster.migProfiles().get(e.getKey());
      if (type == null) {
        throw new PlacementPolicy.Rejected(
            asks
                + ", but cluster.migProfiles maps no Slurm GRES type to profile "
                + e.getKey()
                + (cluster.migProfiles().isEmpty()
                    ? " (the policy has no MIG profiles)"
                    : " (it maps " + new TreeMap<>(cluster.migProfiles()).keySet() + ")"));
      }
      parts.add(cluster.gpuGres() + ":" + type + ":" + e.getValue());
    }
    record.add(
        new Contribution(
            "gpu ownership",
            "MIG: "
                + asked
                + " as Slurm GRES "
                + parts
                + "; Slurm picks the slices and the extender allocates the claim's MIG device(s)"
                + " Slurm chose"));
    return parts;
  }
}
