package io.kse.policy;

import io.kse.policy.model.ClusterSpec;
import io.kse.policy.model.Tier;
import java.util.List;

/** Who owns a pod's GPUs while it runs: one of the three modes of docs/gpu-ownership.md. */
final class GpuOwnership {
  private GpuOwnership() {}

  /**
   * Whether the placeholder must hold its nodes exclusively for the pod's GPUs to have one owner,
   * with the mode recorded (docs/gpu-ownership.md): DRA GPUs are Slurm's exact indices;
   * device-plugin GPUs take the whole node unless the tier declares its nodes unshared.
   */
  static boolean exclusive(
      ClusterSpec cluster, PodFacts pod, Tier tier, List<Contribution> record) {
    boolean exclusive = tier.slurm().exclusive();
    String mode = "gpu ownership";
    if (pod.draGpus() > 0 && pod.devicePluginGpus() > 0) {
      throw new PlacementPolicy.Rejected(
          "the pod asks GPUs both as "
              + PodFacts.GPU
              + " ("
              + pod.devicePluginGpus()
              + ", picked by the device plugin) and through ResourceClaims ("
              + pod.draGpus()
              + "); ask them one way");
    }
    if (pod.draGpus() > 0) {
      record.add(
          new Contribution(
              mode,
              "DRA: the extender allocates the pod's ResourceClaims from the GPU indices Slurm"
                  + " gives the placeholder"));
      return exclusive;
    }
    if (pod.devicePluginGpus() <= 0) {
      return exclusive;
    }
    int perNode = cluster.gpusPerNode();
    if (exclusive) {
      record.add(
          new Contribution(
              mode, "whole node: the tier's placeholder is exclusive (device-plugin GPUs)"));
    } else if (perNode > 0 && pod.devicePluginGpus() >= perNode) {
      record.add(
          new Contribution(
              mode,
              "whole node: the pod asks all "
                  + perNode
                  + " GPUs of a node (cluster.gpusPerNode; device-plugin GPUs)"));
    } else if (tier.riskGpuOverlapWithSlurmJobs()) {
      record.add(
          new Contribution(
              mode,
              "declared unshared: tier "
                  + tier.name()
                  + " sets riskGpuOverlapWithSlurmJobs, so its nodes must never run Slurm jobs"
                  + " beside pods (the device plugin picks the pod's GPUs, not Slurm)"));
    } else {
      exclusive = true;
      record.add(
          new Contribution(
              mode,
              "whole node: the device plugin, not Slurm, picks the pod's "
                  + pod.devicePluginGpus()
                  + " GPU(s), so the placeholder holds its node exclusively; ask GPUs through a"
                  + " ResourceClaim for a part of a node"));
    }
    return exclusive;
  }
}
