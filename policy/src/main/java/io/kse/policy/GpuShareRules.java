package io.kse.policy;

import io.kse.policy.model.ClusterSpec;
import io.kse.policy.model.Tier;
import java.util.List;
import java.util.Optional;

/** Part of one GPU (issue 46): the Slurm shards a pod's share of a GPU becomes, or why not. */
final class GpuShareRules {
  private GpuShareRules() {}

  /**
   * Part of one GPU (issue 46): as many Slurm shards as the pod's claim asks shares, which Slurm
   * places on one GPU; empty when it asks none. Refused: no sharing in the policy or the tier, more
   * shares than a GPU has, whole GPUs and shares in one pod.
   */
  static Optional<String> shards(
      ClusterSpec cluster, PodFacts pod, Tier tier, List<Contribution> record) {
    long shares = pod.draGpuShares();
    if (shares <= 0) {
      return Optional.empty();
    }
    String asks = "the pod asks " + shares + " share(s) of a GPU through a ResourceClaim";
    io.kse.policy.model.GpuShares s =
        cluster
            .gpuShares()
            .orElseThrow(
                () ->
                    new PlacementPolicy.Rejected(
                        asks + ", but the policy has no shared GPUs (cluster.gpuShares)"));
    if (!tier.shareGpus()) {
      throw new PlacementPolicy.Rejected(
          asks + ", but tier " + tier.name() + " may not share GPUs (tiers[].shareGpus)");
    }
    if (pod.gpus() > 0) {
      throw new PlacementPolicy.Rejected(
          asks
              + " and "
              + pod.gpus()
              + " whole GPU(s); a pod takes whole GPUs or part of one, not both");
    }
    if (shares > s.perGpu()) {
      throw new PlacementPolicy.Rejected(
          asks
              + ", but a GPU has "
              + s.perGpu()
              + " (cluster.gpuShares.perGpu): ask whole GPUs instead");
    }
    record.add(
        new Contribution(
            "gpu ownership",
            "shared: "
                + shares
                + " of a GPU's "
                + s.perGpu()
                + " "
                + s.gres()
                + "s; Slurm places them on one GPU and the extender allocates the claim's share"
                + " of that GPU"));
    return Optional.of(s.gres() + ":" + shares);
  }
}
