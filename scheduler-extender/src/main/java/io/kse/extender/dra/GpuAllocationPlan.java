package io.kse.extender.dra;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Pure: how many GPUs a pod's claims ask, and which published device each GPU request gets from the
 * indices Slurm gave the pod's placeholder on its node. Slurm chose the GPUs; this only names them
 * in DRA's terms, so the pod gets exactly those and never one a Slurm job holds.
 */
public final class GpuAllocationPlan {
  /** One device of one request: what {@code status.allocation.devices.results} lists. */
  public record Assignment(String claim, String request, GpuDevice device) {}

  private GpuAllocationPlan() {}

  /** GPUs the requests ask; refuses what Slurm's allocation cannot express. */
  public static long gpusAsked(List<GpuRequest> requests, Set<String> gpuClasses) {
    long n = 0;
    for (GpuRequest r : requests) {
      String where = "ResourceClaim " + r.claim() + " request " + r.request();
      if (r.firstAvailable()) {
        throw new ClaimProblem(
            where
                + " lists alternatives (firstAvailable); this scheduler profile allocates only"
                + " exact GPU requests of classes "
                + gpuClasses);
      }
      if (!gpuClasses.contains(r.deviceClass())) {
        throw new ClaimProblem(
            where
                + " asks device class "
                + r.deviceClass()
                + "; this scheduler profile allocates only GPU classes "
                + gpuClasses
                + " (KSE_DRA_GPU_DEVICE_CLASSES)");
      }
      if (!"ExactCount".equals(r.allocationMode())) {
        throw new ClaimProblem(
            where
                + " asks allocationMode "
                + r.allocationMode()
                + "; ask an exact count of GPUs (Slurm allocates GPUs by count)");
      }
      if (r.count() < 1) {
        throw new ClaimProblem(where + " asks " + r.count() + " devices");
      }
      n += r.count();
    }
    return n;
  }

  /**
   * The device for every GPU asked, in claim and request order, taking Slurm's indices in order.
   *
   * @param indices the GPU indices Slurm gave the placeholder on this node
   * @param published the GPUs the node's ResourceSlices publish
   */
  public static List<Assignment> assign(
      List<GpuRequest> requests,
      Set<String> gpuClasses,
      List<Integer> indices,
      List<GpuDevice> published,
      String node) {
    long asked = gpusAsked(requests, gpuClasses);
    if (asked != indices.size()) {
      throw new ClaimProblem(
          "the pod's claims ask "
              + asked
              + " GPU(s), but its Slurm placeholder holds "
              + indices.size()
              + " on "
              + node
              + " "
              + indices);
    }
    Map<Long, GpuDevice> byIndex = new HashMap<>();
    for (GpuDevice d : published) {
      GpuDevice before = byIndex.putIfAbsent(d.index(), d);
      if (before != null) {
        throw new ClaimProblem(
            "node "
                + node
                + " publishes two GPUs with index "
                + d.index()
                + " ("
                + before.name()
                + ", "
                + d.name()
                + "); cannot tell which one Slurm means");
      }
    }
    List<Assignment> out = new ArrayList<>();
    int next = 0;
    for (GpuRequest r : requests) {
      for (long i = 0; i < r.count(); i++) {
        int idx = indices.get(next++);
        GpuDevice d = byIndex.get((long) idx);
        if (d == null) {
          throw new ClaimProblem(
              "Slurm gave GPU index "
                  + idx
                  + " on "
                  + node
                  + ", but no ResourceSlice of that node publishes a GPU with that index"
                  + " (published: "
                  + published.stream().map(GpuDevice::index).sorted().toList()
                  + ")");
        }
        out.add(new Assignment(r.claim(), r.request(), d));
      }
    }
    return out;
  }
}
