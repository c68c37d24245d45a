package io.kse.extender.testing;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import java.util.Map;

/** Pending inference pods of the slurm-inference scheduler, as tests need them. */
public final class Pods {
  private Pods() {}

  /** A pending pod in {@code serving} asking for {@code cpus} CPUs, 2 GiB and {@code gpus} GPUs. */
  public static PodBuilder pending(
      String name, int cpus, int gpus, Map<String, String> annotations) {
    return new PodBuilder()
        .withNewMetadata()
        .withNamespace("serving")
        .withName(name)
        .withAnnotations(annotations)
        .endMetadata()
        .withNewSpec()
        .withSchedulerName("slurm-inference")
        .addNewContainer()
        .withName("server")
        .withImage("llm:1")
        .withNewResources()
        .addToRequests("cpu", new Quantity(Integer.toString(cpus)))
        .addToRequests("memory", new Quantity("2Gi"))
        .addToRequests("nvidia.com/gpu", new Quantity(Integer.toString(gpus)))
        .endResources()
        .endContainer()
        .endSpec()
        .withNewStatus()
        .withPhase("Pending")
        .endStatus();
  }

  public static Pod pending(String name, int cpus, int gpus) {
    return pending(name, cpus, gpus, Map.of()).build();
  }

  /** The pod as the informer has it once the extender told it it waits: our condition, False. */
  public static Pod toldItWaits(Pod p) {
    return new PodBuilder(p)
        .editOrNewStatus()
        .addNewCondition()
        .withType(io.kse.extender.k8s.WellKnown.CONDITION)
        .withStatus("False")
        .withReason("SlurmPending")
        .endCondition()
        .endStatus()
        .build();
  }
}
