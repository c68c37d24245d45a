package io.kse.extender.dra;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

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
      if (r.shares() > 0 || r.mig()) {
        continue; // part of a GPU: sharesAsked, migAsked
      }
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
   * The MIG devices the requests ask, by profile (issue 46): exact counts of a GPU class, never
   * beside whole GPUs or shares; empty when none asks a MIG profile.
   */
  public static Map<String, Long> migAsked(List<GpuRequest> requests, Set<String> gpuClasses) {
    Map<String, Long> out = new TreeMap<>();
    for (GpuRequest r : requests) {
      if (!r.mig()) {
        continue;
      }
      String where = "ResourceClaim " + r.claim() + " request " + r.request();
      if (!gpuClasses.contains(r.deviceClass())) {
        throw new ClaimProblem(
            where
                + " asks a MIG device of class "
                + r.deviceClass()
                + "; this scheduler profile allocates only GPU classes "
                + gpuClasses
                + " (KSE_DRA_GPU_DEVICE_CLASSES: add the MIG class, e.g. mig.nvidia.com)");
      }
      if (!"ExactCount".equals(r.allocationMode()) || r.count() < 1 || r.shares() > 0) {
        throw new ClaimProblem(where + " must ask an exact count of MIG devices of its profile");
      }
      out.merge(r.migProfile(), r.count(), Long::sum);
    }
    if (!out.isEmpty()
        && (gpusAsked(requests, gpuClasses) > 0 || sharesAsked(requests, gpuClasses) > 0)) {
      throw new ClaimProblem(
          "the pod's claims ask MIG devices beside whole GPUs or shares of one; a pod takes one"
              + " kind of GPU");
    }
    return out;
  }

  /**
   * The shares of one GPU the requests ask (issue 46): at most one such request, of one device,
   * never beside whole GPUs; 0 when none asks shares.
   */
  public static long sharesAsked(List<GpuRequest> requests, Set<String> gpuClasses) {
    List<GpuRequest> shared = requests.stream().filter(r -> r.shares() > 0).toList();
    if (shared.isEmpty()) {
      return 0;
    }
    GpuRequest r = shared.get(0);
    String where = "ResourceClaim " + r.claim() + " request " + r.request();
    if (shared.size() > 1) {
      throw new ClaimProblem(
          "the pod's claims ask shares of a GPU in "
              + shared.size()
              + " requests; Slurm places one request's shards on one GPU: ask them in one");
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
    if (!"ExactCount".equals(r.allocationMode()) || r.count() != 1) {
      throw new ClaimProblem(where + " asks shares of " + r.count() + " devices; ask them of one");
    }
    if (gpusAsked(requests, gpuClasses) > 0) {
      throw new ClaimProblem(
          "the pod's claims ask whole GPUs and shares of a GPU; a pod takes one or the other");
    }
    return r.shares();
  }

  /**
   * The one share request's device: the GPU with Slurm's index {@code gpuIndex}, where Slurm put
   * the placeholder's {@code shards}, which must be the shares the request asks.
   */
  public static Assignment assignShare(
      List<GpuRequest> requests,
      int gpuIndex,
      long shards,
      List<GpuDevice> published,
      String node) {
    GpuRequest r =
        requests.stream()
            .filter(q -> q.shares() > 0)
            .findFirst()
            .orElseThrow(
                () ->
                    new ClaimProblem(
                        "the pod's claims ask no share of a GPU, but its Slurm placeholder holds "
                            + shards
                            + " shards on "
                            + node));
    if (r.shares() != shards) {
      throw new ClaimProblem(
          "the pod's claims ask "
              + r.shares()
              + " shares, but its Slurm placeholder holds "
              + shards
              + " shards on "
              + node);
    }
    List<GpuDevice> at = published.stream().filter(d -> d.index() == gpuIndex).toList();
    if (at.size() != 1) {
      throw new ClaimProblem(
          "Slurm put the shards on GPU index "
              + gpuIndex
              + " of "
              + node
              + ", but "
              + (at.isEmpty() ? "no" : at.size())
              + " published GPU(s) of that node have that index (published: "
              + published.stream().map(GpuDevice::index).sorted().toList()
              + ")");
    }
    return new Assignment(r.claim(), r.request(), at.get(0));
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
    Map<String, Long> mig = migAsked(requests, gpuClasses);
    if (requests.stream().anyMatch(r -> r.shares() > 0)) {
      throw new ClaimProblem(
          "the pod's claims ask a share of a GPU, but its Slurm placeholder holds no shards on "
              + node
              + " (it holds GPUs "
              + indices
              + ")");
    }
    long migTotal = mig.values().stream().mapToLong(Long::longValue).sum();
    if (asked + migTotal != indices.size()) {
      throw new ClaimProblem(
          "the pod's claims ask "
              + (mig.isEmpty() ? asked + " GPU(s)" : "MIG devices " + mig)
              + ", but its Slurm placeholder holds "
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
    // Slurm's indices, each to its published device, queued by kind: whole GPUs ("") and MIG
    // devices by profile; each request takes from its kind's queue, in Slurm's order
    Map<String, ArrayDeque<GpuDevice>> byKind = new HashMap<>();
    for (int idx : indices) {
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
      byKind.computeIfAbsent(d.profile(), k -> new ArrayDeque<>()).add(d);
    }
    List<Assignment> out = new ArrayList<>();
    for (GpuRequest r : requests) {
      ArrayDeque<GpuDevice> q = byKind.getOrDefault(r.migProfile(), new ArrayDeque<>());
      for (long i = 0; i < r.count(); i++) {
        GpuDevice d = q.poll();
        if (d == null) {
          throw new ClaimProblem(
              "ResourceClaim "
                  + r.claim()
                  + " request "
                  + r.request()
                  + " asks "
                  + (r.mig() ? "MIG devices of profile " + r.migProfile() : "whole GPUs")
                  + ", but the devices published at the indices Slurm gave on "
                  + node
                  + " "
                  + indices
                  + " are "
                  + kinds(indices, byIndex));
        }
        out.add(new Assignment(r.claim(), r.request(), d));
      }
    }
    return out;
  }

  /** What each of Slurm's indices is published as, for a refusal. */
  private static String kinds(List<Integer> indices, Map<Long, GpuDevice> byIndex) {
    List<String> out = new ArrayList<>();
    for (int idx : indices) {
      GpuDevice d = byIndex.get((long) idx);
      out.add(
          idx
              + ": "
              + d.name()
              + (d.profile().isEmpty() ? " (a GPU)" : " (MIG " + d.profile() + ")"));
    }
    return out.toString();
  }
}
