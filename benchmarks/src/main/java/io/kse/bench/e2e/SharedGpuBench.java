package io.kse.bench.e2e;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * Shared GPUs (issue 46), published as NVIDIA's DRA driver does (each GPU with consumable shares)
 * on a stack with {@code --gpu-shards}: single quarter-GPU pods one at a time, creation → bound;
 * then 8 at once, and how many GPUs they hold per replica (a whole-GPU replica holds 1).
 */
final class SharedGpuBench {
  private final KubernetesClient kube;
  private final Bursts bursts;
  private final Figures out;
  private final String scheduler;
  private final List<String> gpuNodes;

  SharedGpuBench(
      KubernetesClient kube, Bursts bursts, Figures out, String scheduler, List<String> gpuNodes) {
    this.kube = kube;
    this.bursts = bursts;
    this.out = out;
    this.scheduler = scheduler;
    this.gpuNodes = gpuNodes;
  }

  void run(int shares, int rounds) throws Exception {
    publish(shares);
    PodShape quarter = PodShape.gpus(scheduler, 0).sharing("quarter");
    List<Long> times = new ArrayList<>();
    for (int r = 0; r < rounds; r++) {
      Run run = bursts.bound("bench-shared-" + r + "-" + out.tag(), quarter, 1);
      if (run.bound().size() == 1) {
        times.add(
            run.bound().values().iterator().next() - run.created().values().iterator().next());
      }
    }
    Stats s = Stats.ofDurations(times);
    out.line("shared_ttb_p50_ms", String.format("%.0f", s.p50()));
    out.line("shared_ttb_done", times.size() + "/" + rounds);
    String ns = "bench-shared-eight-" + out.tag();
    Run eight = bursts.bound(ns, quarter, 8, null, true);
    Set<String> held = new TreeSet<>();
    for (Pod p : kube.pods().inNamespace(ns).list().getItems()) {
      for (var c : p.getStatus().getResourceClaimStatuses()) {
        kube.resources(ResourceClaim.class)
            .inNamespace(ns)
            .withName(c.getResourceClaimName())
            .get()
            .getStatus()
            .getAllocation()
            .getDevices()
            .getResults()
            .forEach(d -> held.add(p.getSpec().getNodeName() + "/" + d.getDevice()));
      }
    }
    out.line("shared_replicas_bound_of_8", Integer.toString(eight.bound().size()));
    out.line("shared_gpus_held_by_8", Integer.toString(held.size()));
    out.line("shared_gpus_per_replica", String.format("%.2f", held.size() / 8.0));
    bursts.delete(ns);
  }

  /** The DeviceClass and each GPU node's ResourceSlice, every GPU with {@code shares} shares. */
  private void publish(int shares) {
    kube.resource(
            """
            apiVersion: resource.k8s.io/v1
            kind: DeviceClass
            metadata: {name: gpu.nvidia.com}
            spec:
              selectors: [{cel: {expression: "device.driver == 'gpu.nvidia.com'"}}]
            """)
        .serverSideApply();
    for (String node : gpuNodes) {
      StringBuilder devices = new StringBuilder();
      for (int i = 0; i < 8; i++) {
        devices.append(
            "  - {name: gpu-%d, attributes: {index: {int: %d}}, allowMultipleAllocations: true,"
                    .formatted(i, i)
                + " capacity: {shares: {value: \"%d\"}}}\n".formatted(shares));
      }
      kube.resource(
              ("apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\n"
                          + "metadata: {name: bench-gpus-%s}\n"
                          + "spec:\n  driver: gpu.nvidia.com\n  nodeName: %s\n"
                          + "  pool: {name: %s, generation: 1, resourceSliceCount: 1}\n  devices:\n")
                      .formatted(node, node, node)
                  + devices)
          .serverSideApply();
    }
  }
}
