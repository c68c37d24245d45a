package io.kse.extender.dra;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The claim writer against fabric8's CRUD mock: what it writes, and what it leaves alone. */
@EnableKubernetesMockClient(crud = true)
class FabricGpuClaimsTest {
  static KubernetesClient client;
  static io.fabric8.kubernetes.client.server.mock.KubernetesMockServer server;

  /** A namespace of each test's own (claims keep their finalizer: the mock never deletes them). */
  static final java.util.concurrent.atomic.AtomicInteger TESTS =
      new java.util.concurrent.atomic.AtomicInteger();

  final String ns = "serving-" + TESTS.incrementAndGet();

  final FabricGpuClaims claims =
      new FabricGpuClaims(client, Set.of("gpu.nvidia.com"), "gpu.nvidia.com", "index");

  @BeforeEach
  void slicesAndClaims() {
    StringBuilder devices = new StringBuilder();
    for (int i = 0; i < 8; i++) {
      devices.append("    - {name: gpu-%d, attributes: {index: {int: %d}}}\n".formatted(i, i));
    }
    // MIG slices as NVIDIA's driver names them, with the index Slurm's gres.conf gives them
    devices.append(
        "    - {name: gpu-7-mig-19-0-1, attributes: {index: {int: 8}, profile: {string: 1g.10gb}}}\n");
    devices.append(
        "    - {name: gpu-7-mig-9-4-4, attributes: {index: {int: 9}, profile: {string: 3g.40gb}}}\n");
    ResourceSlice slice =
        Serialization.unmarshal(
            """
                apiVersion: resource.k8s.io/v1
                kind: ResourceSlice
                metadata: {name: gpus-node-a}
                spec:
                  driver: gpu.nvidia.com
                  nodeName: node-a
                  pool: {name: node-a, generation: 1, resourceSliceCount: 1}
                  devices:
                %s"""
                .formatted(devices),
            ResourceSlice.class);
    // the CRUD mock does not serve the spec.nodeName field selector the API server has
    server
        .expect()
        .get()
        .withPath("/apis/resource.k8s.io/v1/resourceslices?fieldSelector=spec.nodeName%3Dnode-a")
        .andReturn(
            200,
            new io.fabric8.kubernetes.api.model.resource.v1.ResourceSliceListBuilder()
                .withItems(slice)
                .build())
        .always();
    claim("first", 2);
    claim("second", 2);
  }

  void claim(String name, int gpus) {
    client
        .resource(
            Serialization.unmarshal(
                """
                apiVersion: resource.k8s.io/v1
                kind: ResourceClaim
                metadata: {name: %s, namespace: %s}
                spec:
                  devices:
                    requests:
                      - name: gpus
                        exactly: {deviceClassName: gpu.nvidia.com, allocationMode: ExactCount, count: %d}
                """
                    .formatted(name, ns, gpus),
                ResourceClaim.class))
        .create();
  }

  ResourceClaim get(String name) {
    return client.resources(ResourceClaim.class).inNamespace(ns).withName(name).get();
  }

  /** Writes an allocation as another allocator would have, reserved for {@code consumer}. */
  void allocatedElsewhere(String name, String consumer) {
    ResourceClaim c = get(name);
    c.setStatus(
        Serialization.unmarshal(
            """
            allocation:
              devices:
                results:
                  - {request: gpus, driver: gpu.nvidia.com, pool: node-a, device: gpu-6}
                  - {request: gpus, driver: gpu.nvidia.com, pool: node-a, device: gpu-7}
            reservedFor: %s
            """
                .formatted(
                    consumer.isEmpty()
                        ? "[]"
                        : "[{resource: pods, name: " + consumer + ", uid: uid-" + consumer + "}]"),
            io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimStatus.class));
    client.resources(ResourceClaim.class).inNamespace(ns).resource(c).updateStatus();
  }

  Pod pod(String... claimNames) {
    PodBuilder b =
        new PodBuilder()
            .withNewMetadata()
            .withNamespace(ns)
            .withName("llm-0")
            .withUid("uid-llm-0")
            .endMetadata()
            .withNewSpec()
            .endSpec();
    for (String c : claimNames) {
      b.editSpec()
          .addNewResourceClaim()
          .withName(c)
          .withResourceClaimName(c)
          .endResourceClaim()
          .endSpec();
    }
    return b.build();
  }

  static List<String> devices(ResourceClaim c) {
    return c.getStatus().getAllocation().getDevices().getResults().stream()
        .map(DeviceRequestAllocationResult::getDevice)
        .sorted()
        .toList();
  }

  @Test
  void claimsGetSlurmsGpusReservedForThePodAndTheFinalizerKubernetesDeallocatesBy() {
    claims.allocate(pod("first", "second"), "node-a", List.of(0, 1, 2, 3));
    for (String name : List.of("first", "second")) {
      ResourceClaim c = get(name);
      assertThat(c.getMetadata().getFinalizers())
          .containsExactly("resource.kubernetes.io/delete-protection");
      assertThat(c.getStatus().getReservedFor())
          .singleElement()
          .satisfies(r -> assertThat(r.getUid()).isEqualTo("uid-llm-0"));
    }
    assertThat(devices(get("first"))).hasSize(2);
    assertThat(
            List.of(devices(get("first")), devices(get("second"))).stream().flatMap(List::stream))
        .containsExactlyInAnyOrder("gpu-0", "gpu-1", "gpu-2", "gpu-3");
    // a retried bind writes nothing new
    claims.allocate(pod("first", "second"), "node-a", List.of(0, 1, 2, 3));
    assertThat(get("first").getMetadata().getFinalizers()).hasSize(1);
  }

  void shareClaim(String name, String shares) {
    client
        .resource(
            Serialization.unmarshal(
                """
                apiVersion: resource.k8s.io/v1
                kind: ResourceClaim
                metadata: {name: %s, namespace: %s}
                spec:
                  devices:
                    requests:
                      - name: part
                        exactly:
                          deviceClassName: gpu.nvidia.com
                          capacity: {requests: {shares: "%s"}}
                """
                    .formatted(name, ns, shares),
                ResourceClaim.class))
        .create();
  }

  void migClaim(String name, String... selectors) {
    StringBuilder sel = new StringBuilder();
    for (String cel : selectors) {
      sel.append("                          - cel: {expression: \"%s\"}\n".formatted(cel));
    }
    client
        .resource(
            Serialization.unmarshal(
                """
                apiVersion: resource.k8s.io/v1
                kind: ResourceClaim
                metadata: {name: %s, namespace: %s}
                spec:
                  devices:
                    requests:
                      - name: slice
                        exactly:
                          deviceClassName: gpu.nvidia.com
                          selectors:
                %s"""
                    .formatted(name, ns, sel),
                ResourceClaim.class))
        .create();
  }

  /** Issue 46: a MIG claim gets the MIG device at the index Slurm gave its placeholder. */
  @Test
  void aMigClaimGetsTheMigDeviceSlurmChoseAndOfItsProfileOnly() {
    migClaim("slice", "device.attributes['gpu.nvidia.com'].profile == '1g.10gb'");
    Pod pod = pod("slice");
    assertThat(claims.asks(pod).mig()).containsExactly(java.util.Map.entry("1g.10gb", 1L));
    assertThat(claims.gpusAsked(pod)).isZero();
    assertThatThrownBy(() -> claims.allocate(pod, "node-a", List.of(9)))
        .isInstanceOf(ClaimProblem.class)
        .hasMessageContaining("asks MIG devices of profile 1g.10gb")
        .hasMessageContaining("9: gpu-7-mig-9-4-4 (MIG 3g.40gb)");
    claims.allocate(pod, "node-a", List.of(8));
    assertThat(get("slice").getStatus().getAllocation().getDevices().getResults())
        .extracting(DeviceRequestAllocationResult::getDevice)
        .containsExactly("gpu-7-mig-19-0-1");
  }

  @Test
  void aMigSelectorBesideOtherSelectorsIsRefusedByName() {
    migClaim(
        "odd",
        "device.attributes['gpu.nvidia.com'].profile == '1g.10gb'",
        "device.attributes['gpu.nvidia.com'].productName == 'H100'");
    assertThatThrownBy(() -> claims.asks(pod("odd")))
        .isInstanceOf(ClaimProblem.class)
        .hasMessageContaining("selects a MIG device by 1 profile selector(s) and 1 other(s)")
        .hasMessageContaining("name one profile");
  }

  /** Issue 46: a share of the GPU Slurm put the shards on, under a share ID of its own. */
  @Test
  void aShareClaimGetsItsShareOfTheGpuSlurmPutTheShardsOn() {
    shareClaim("part", "2");
    Pod pod = pod("part");
    assertThat(claims.sharesAsked(pod)).isEqualTo(2);
    assertThat(claims.gpusAsked(pod)).isZero();
    claims.allocateShare(pod, "node-a", 5, 2);
    DeviceRequestAllocationResult r =
        get("part").getStatus().getAllocation().getDevices().getResults().get(0);
    assertThat(r.getDevice()).isEqualTo("gpu-5");
    assertThat(r.getShareID()).isNotBlank();
    assertThat(r.getConsumedCapacity()).containsKey("shares");
    assertThat(r.getConsumedCapacity().get("shares").getAmount()).isEqualTo("2");
    String share = r.getShareID();
    claims.allocateShare(pod, "node-a", 5, 2); // a retried bind keeps the first share
    assertThat(
            get("part").getStatus().getAllocation().getDevices().getResults().get(0).getShareID())
        .isEqualTo(share);
  }

  @Test
  void aShareThatIsNotAWholeNumberOfShardsIsRefused() {
    shareClaim("half", "500m");
    assertThatThrownBy(() -> claims.sharesAsked(pod("half")))
        .isInstanceOf(ClaimProblem.class)
        .hasMessageContaining("a whole number of Slurm shards");
  }

  @Test
  void wholeGpusAndAShareInOnePodAreRefused() {
    shareClaim("part", "1");
    assertThatThrownBy(() -> claims.sharesAsked(pod("first", "part")))
        .isInstanceOf(ClaimProblem.class)
        .hasMessageContaining("whole GPUs and shares of a GPU");
  }

  /** Issue 26 #4. */
  @Test
  void aClaimInUseByAnotherPodIsRefusedAndThePodsOtherClaimIsLeftAsItWas() {
    allocatedElsewhere("second", "holder");
    assertThatThrownBy(() -> claims.allocate(pod("first", "second"), "node-a", List.of(0, 1, 2, 3)))
        .isInstanceOf(ClaimProblem.class)
        .hasMessageContaining("ResourceClaim second")
        .hasMessageContaining("in use by [pods/holder]");
    ResourceClaim first = get("first");
    assertThat(first.getStatus() == null || first.getStatus().getAllocation() == null).isTrue();
    assertThat(first.getMetadata().getFinalizers()).isNullOrEmpty();
  }

  /** Issue 26 #5: allocated by an extender that set no finalizer, its pod gone. */
  @Test
  void aClaimAllocatedToGpusNoPodUsesIsCorrectedToSlurms() {
    allocatedElsewhere("first", "");
    claims.allocate(pod("first"), "node-a", List.of(2, 3));
    ResourceClaim c = get("first");
    assertThat(devices(c)).containsExactly("gpu-2", "gpu-3");
    assertThat(c.getStatus().getReservedFor())
        .singleElement()
        .satisfies(r -> assertThat(r.getUid()).isEqualTo("uid-llm-0"));
    assertThat(c.getMetadata().getFinalizers())
        .containsExactly("resource.kubernetes.io/delete-protection");
  }
}
