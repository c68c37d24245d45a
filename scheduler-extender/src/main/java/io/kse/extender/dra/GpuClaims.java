package io.kse.extender.dra;

import io.fabric8.kubernetes.api.model.Pod;
import java.util.List;

/** The seam to a pod's DRA ResourceClaims: how many GPUs they ask, and their allocation. */
public interface GpuClaims {
  /** GPUs the pod asks through ResourceClaims (0 for none); {@link ClaimProblem} if unservable. */
  long gpusAsked(Pod pod);

  /**
   * Allocates the pod's claims to the GPUs with these Slurm indices on {@code node} and reserves
   * them for the pod, before it is bound; idempotent. {@link ClaimProblem} says why it cannot.
   *
   * @return what was allocated, for the log and the Event
   */
  String allocate(Pod pod, String node, List<Integer> indices);

  /** Shares of one GPU the pod asks through ResourceClaims (0 for none; issue 46). */
  default long sharesAsked(Pod pod) {
    return 0;
  }

  /** Whole GPUs, shares of one GPU and MIG devices by profile a pod's claims ask. */
  record Asks(long gpus, long shares, java.util.Map<String, Long> mig) {
    public Asks(long gpus, long shares) {
      this(gpus, shares, java.util.Map.of());
    }
  }

  /** Both at once: an implementation reading the claims answers from one read. */
  default Asks asks(Pod pod) {
    return new Asks(gpusAsked(pod), sharesAsked(pod));
  }

  /**
   * Allocates the pod's share request to the GPU with Slurm index {@code gpuIndex} on {@code node},
   * consuming {@code shares} of it under a share of its own, and reserves it for the pod.
   */
  default String allocateShare(Pod pod, String node, int gpuIndex, long shares) {
    throw new ClaimProblem("shares of a GPU are not served here (no DRA access configured)");
  }

  /** Whether the pod has ResourceClaims at all. */
  static boolean hasClaims(Pod pod) {
    return pod.getSpec().getResourceClaims() != null
        && !pod.getSpec().getResourceClaims().isEmpty();
  }

  /** For pods without claims, and tests. */
  static GpuClaims none() {
    return new GpuClaims() {
      @Override
      public long gpusAsked(Pod pod) {
        if (hasClaims(pod)) {
          throw new ClaimProblem("ResourceClaims are not served here (no DRA access configured)");
        }
        return 0;
      }

      @Override
      public String allocate(Pod pod, String node, List<Integer> indices) {
        throw new ClaimProblem("ResourceClaims are not served here (no DRA access configured)");
      }
    };
  }
}
