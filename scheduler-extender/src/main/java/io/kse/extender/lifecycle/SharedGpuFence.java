package io.kse.extender.lifecycle;

import io.kse.policy.PodFacts;
import io.kse.slurm.SlurmRelease;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * Part of a GPU only where Slurm keeps it apart from whole GPUs (issue 46): before {@link
 * SlurmRelease#SHARDS_KEPT_APART} Slurm can give a GPU whole to one job while another still holds
 * shards of it, and the pod on those shards would share its GPU with a training job.
 */
final class SharedGpuFence {
  private SharedGpuFence() {}

  /**
   * Why the placement's members may not have part of a GPU on this Slurm; empty when none asks for
   * part of one (Slurm is then not asked) or Slurm does not say its release.
   */
  static Optional<String> refusal(
      List<PodFacts> members, Supplier<Optional<SlurmRelease>> release) {
    if (members.stream().noneMatch(m -> m.draGpuShares() > 0)) {
      return Optional.empty();
    }
    return release
        .get()
        .filter(r -> !r.keepsShardsApart())
        .map(
            r ->
                "the pod asks part of a GPU, but Slurm "
                    + r
                    + " can give a GPU whole to one job while another still holds shards of it"
                    + " (SchedMD bug 19110, fixed in Slurm "
                    + SlurmRelease.SHARDS_KEPT_APART
                    + "): shared GPUs need Slurm "
                    + SlurmRelease.SHARDS_KEPT_APART
                    + " or later; ask whole GPUs");
  }
}
