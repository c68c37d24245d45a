package io.kse.extender.dra;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class GpuAllocationPlanTest {
  static final Set<String> GPU = Set.of("gpu.nvidia.com");

  /** The node's 8 GPUs as the NVIDIA DRA driver names them: gpu-N with index N, one pool. */
  static List<GpuDevice> eightGpus(String node) {
    List<GpuDevice> out = new ArrayList<>();
    // published out of order: the index attribute, not the list position, identifies a GPU
    IntStream.of(5, 0, 7, 2, 1, 3, 6, 4)
        .forEach(i -> out.add(new GpuDevice("gpu.nvidia.com", node, "gpu-" + i, i)));
    return out;
  }

  static GpuRequest exact(String claim, String request, long count) {
    return new GpuRequest(claim, request, "gpu.nvidia.com", "ExactCount", count, false);
  }

  @Test
  void eachRequestGetsTheDevicesWithTheIndicesSlurmChose() {
    List<GpuAllocationPlan.Assignment> plan =
        GpuAllocationPlan.assign(
            List.of(exact("c-a", "gpus", 2), exact("c-b", "more", 1)),
            GPU,
            List.of(4, 6, 7),
            eightGpus("gpu-node-3"),
            "gpu-node-3");
    assertThat(plan)
        .extracting(a -> a.claim() + "/" + a.request() + "=" + a.device().name())
        .containsExactly("c-a/gpus=gpu-4", "c-a/gpus=gpu-6", "c-b/more=gpu-7");
    assertThat(plan).allMatch(a -> a.device().pool().equals("gpu-node-3"));
  }

  static GpuRequest mig(String claim, String profile, long count) {
    return new GpuRequest(claim, "slice", "gpu.nvidia.com", "ExactCount", count, false, 0, profile);
  }

  @Test
  void migRequestsTakeTheMigDevicesOfTheirProfileAtSlurmsIndicesWholeOnesNone() {
    List<GpuDevice> published = new ArrayList<>(eightGpus("n"));
    published.add(new GpuDevice("gpu.nvidia.com", "n", "gpu-6-mig-a", 8, "1g.10gb"));
    published.add(new GpuDevice("gpu.nvidia.com", "n", "gpu-6-mig-b", 9, "1g.10gb"));
    published.add(new GpuDevice("gpu.nvidia.com", "n", "gpu-7-mig-c", 10, "3g.40gb"));
    var requests = List.of(mig("small", "1g.10gb", 2), mig("big", "3g.40gb", 1));
    assertThat(GpuAllocationPlan.migAsked(requests, GPU))
        .containsExactly(java.util.Map.entry("1g.10gb", 2L), java.util.Map.entry("3g.40gb", 1L));
    assertThat(GpuAllocationPlan.gpusAsked(requests, GPU)).isZero();
    assertThat(GpuAllocationPlan.assign(requests, GPU, List.of(10, 9, 8), published, "n"))
        .extracting(a -> a.claim() + "=" + a.device().name())
        .containsExactly("small=gpu-6-mig-b", "small=gpu-6-mig-a", "big=gpu-7-mig-c");
    assertThatThrownBy(
            () ->
                GpuAllocationPlan.assign(
                    List.of(mig("small", "1g.10gb", 1)), GPU, List.of(3), published, "n"))
        .isInstanceOf(ClaimProblem.class)
        .hasMessageContaining("3: gpu-3 (a GPU)");
    assertThatThrownBy(
            () ->
                GpuAllocationPlan.migAsked(
                    List.of(mig("s", "1g.10gb", 1), exact("w", "g", 1)), GPU))
        .isInstanceOf(ClaimProblem.class)
        .hasMessageContaining("a pod takes one kind of GPU");
  }

  @Test
  void aCountThatDiffersFromSlurmsAllocationIsRefused() {
    assertThatThrownBy(
            () ->
                GpuAllocationPlan.assign(
                    List.of(exact("c", "gpus", 4)), GPU, List.of(0, 1), eightGpus("n"), "n"))
        .isInstanceOf(ClaimProblem.class)
        .hasMessage("the pod's claims ask 4 GPU(s), but its Slurm placeholder holds 2 on n [0, 1]");
  }

  @Test
  void anIndexNoSlicePublishesIsRefused() {
    assertThatThrownBy(
            () ->
                GpuAllocationPlan.assign(
                    List.of(exact("c", "gpus", 1)), GPU, List.of(9), eightGpus("n"), "n"))
        .isInstanceOf(ClaimProblem.class)
        .hasMessageContaining("Slurm gave GPU index 9 on n, but no ResourceSlice");
  }

  @Test
  void twoDevicesWithOneIndexAreRefusedRatherThanGuessed() {
    List<GpuDevice> twice = new ArrayList<>(eightGpus("n"));
    twice.add(new GpuDevice("gpu.nvidia.com", "other-pool", "gpu-x", 3));
    assertThatThrownBy(
            () ->
                GpuAllocationPlan.assign(
                    List.of(exact("c", "gpus", 1)), GPU, List.of(3), twice, "n"))
        .isInstanceOf(ClaimProblem.class)
        .hasMessageContaining("two GPUs with index 3");
  }

  @Test
  void requestsSlurmCannotExpressAreRefusedByName() {
    assertThatThrownBy(
            () ->
                GpuAllocationPlan.gpusAsked(
                    List.of(new GpuRequest("c", "nic", "rdma.example.com", "ExactCount", 1, false)),
                    GPU))
        .hasMessage(
            "ResourceClaim c request nic asks device class rdma.example.com; this scheduler"
                + " profile allocates only GPU classes [gpu.nvidia.com]"
                + " (KSE_DRA_GPU_DEVICE_CLASSES)");
    assertThatThrownBy(
            () ->
                GpuAllocationPlan.gpusAsked(
                    List.of(new GpuRequest("c", "all", "gpu.nvidia.com", "All", 0, false)), GPU))
        .hasMessageContaining("asks allocationMode All");
    assertThatThrownBy(
            () ->
                GpuAllocationPlan.gpusAsked(
                    List.of(new GpuRequest("c", "alt", "", "", 0, true)), GPU))
        .hasMessageContaining("lists alternatives (firstAvailable)");
    assertThat(GpuAllocationPlan.gpusAsked(List.of(exact("a", "x", 3), exact("b", "y", 1)), GPU))
        .isEqualTo(4);
  }
}
