package io.kse.bench.e2e;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * What the pods of a burst ask: their scheduler and whole GPUs, or a share of a GPU by claim
 * template (issue 46), or the TPU chips of one host of a slice (issue 45); and their annotations by
 * pod name (a group's keys).
 *
 * @param shareTemplate the ResourceClaimTemplate the pods name for their share of a GPU
 * @param tpuTopology the slice topology the pods ask, TPU chips instead of GPUs
 */
record PodShape(
    String scheduler,
    int gpus,
    Optional<String> shareTemplate,
    Optional<String> tpuTopology,
    Function<String, Map<String, String>> annotations) {

  /** Pods of {@code scheduler} asking {@code gpus} whole GPUs. */
  static PodShape gpus(String scheduler, int gpus) {
    return new PodShape(scheduler, gpus, Optional.empty(), Optional.empty(), name -> Map.of());
  }

  /** The same pods, a quarter of a GPU each through this claim template, no whole GPU. */
  PodShape sharing(String template) {
    return new PodShape(scheduler, 0, Optional.of(template), tpuTopology, annotations);
  }

  /** The same pods, the 4 chips of one TPU host of a v5p slice of this topology. */
  PodShape tpu(String topology) {
    return new PodShape(scheduler, gpus, shareTemplate, Optional.of(topology), annotations);
  }

  /** The same pods with these annotations, by pod name. */
  PodShape annotated(Function<String, Map<String, String>> by) {
    return new PodShape(scheduler, gpus, shareTemplate, tpuTopology, by);
  }

  Pod pod(String ns, String name) {
    Pod p = gpuPod(ns, name, scheduler, gpus);
    Map<String, String> a = new HashMap<>(annotations.apply(name));
    // a quarter GPU: its claim comes by annotation (manifests/base/gpu-share-claims.yaml)
    shareTemplate.ifPresent(
        t -> {
          a.put("kse.io/gpu-share-template", t);
          p.getMetadata().setLabels(Map.of("kse-test/tier", "shared"));
          p.getSpec()
              .getContainers()
              .get(0)
              .getResources()
              .setLimits(Map.of("memory", new Quantity("1Gi")));
        });
    // as GKE's TPU pods ask: the chips of one host, the slice by label
    tpuTopology.ifPresent(
        topology -> {
          p.getSpec()
              .setNodeSelector(
                  Map.of(
                      "cloud.google.com/gke-tpu-accelerator",
                      "tpu-v5p-slice",
                      "cloud.google.com/gke-tpu-topology",
                      topology));
          p.getSpec()
              .getContainers()
              .get(0)
              .getResources()
              .setLimits(
                  Map.of("google.com/tpu", new Quantity("4"), "memory", new Quantity("1Gi")));
        });
    p.getMetadata().setAnnotations(a);
    return p;
  }

  private static Pod gpuPod(String ns, String name, String scheduler, int gpus) {
    return new PodBuilder()
        .withNewMetadata()
        .withName(name)
        .withNamespace(ns)
        .endMetadata()
        .withNewSpec()
        .withSchedulerName(scheduler)
        .withTerminationGracePeriodSeconds(0L)
        // the default scheduler must stay off the CPU-only nodes too, like Slurm
        .withNodeSelector(Map.of("type", "kwok"))
        .addNewContainer()
        .withName("server")
        .withImage("registry.example/model-server:1")
        .withNewResources()
        .withRequests(Map.of("cpu", new Quantity("1"), "memory", new Quantity("1Gi")))
        .withLimits(
            Map.of(
                "nvidia.com/gpu",
                new Quantity(Integer.toString(gpus)),
                "memory",
                new Quantity("1Gi")))
        .endResources()
        .endContainer()
        .endSpec()
        .build();
  }
}
