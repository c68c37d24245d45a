package io.kse.e2e;

import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.PodSpecBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.List;
import java.util.Optional;

/**
 * What the NVIDIA DRA driver would publish for the stack's kwok GPU nodes — a DeviceClass and 8
 * GPUs per node, device {@code gpu-N} with attribute {@code index: N} — and claim templates asking
 * for some of them. Shared by the GPU-ownership scenarios and the soak.
 */
final class DraGpus {
  static final String DRIVER = "gpu.nvidia.com";

  /** The consumable capacity each GPU is published with on a stack with shares (issue 46). */
  static final String SHARES = "shares";

  private static final String DEVICE_PREFIX = "gpu-";

  private DraGpus() {}

  /** The DeviceClass and one ResourceSlice per node (server-side apply: idempotent). */
  static void publish(KubernetesClient kube, List<String> nodes) {
    publish(kube, nodes, 0);
  }

  /**
   * The same, with {@code shares} &gt; 0 each GPU published as NVIDIA's driver does for consumable
   * shares (issue 46): {@code allowMultipleAllocations} and a {@code shares} capacity.
   */
  static void publish(KubernetesClient kube, List<String> nodes, int shares) {
    kube.resource(
            """
            apiVersion: resource.k8s.io/v1
            kind: DeviceClass
            metadata: {name: %s}
            spec:
              selectors:
                - cel: {expression: "device.driver == '%s'"}
            """
                .formatted(DRIVER, DRIVER))
        .serverSideApply();
    for (String node : nodes) {
      StringBuilder devices = new StringBuilder();
      for (int i = 0; i < 8; i++) {
        devices.append(
            """
                - name: %s%d
                  attributes:
                    index: {int: %d}
                    type: {string: gpu}
                    uuid: {string: GPU-%s-%d}
            """
                .formatted(DEVICE_PREFIX, i, i, node, i));
        if (shares > 0) {
          devices.append(
              """
                  allowMultipleAllocations: true
                  capacity:
                    shares: {value: "%d"}
            """
                  .formatted(shares));
        }
      }
      applySlice(kube, node, devices);
    }
  }

  /** A ResourceClaimTemplate {@code name} in {@code namespace} asking for {@code count} GPUs. */
  static void template(KubernetesClient kube, String namespace, String name, int count) {
    kube.resource(
            """
            apiVersion: resource.k8s.io/v1
            kind: ResourceClaimTemplate
            metadata: {name: %s, namespace: %s}
            spec:
              spec:
                devices:
                  requests:
                    - name: gpus
                      exactly: {deviceClassName: %s, allocationMode: ExactCount, count: %d}
            """
                .formatted(name, namespace, DRIVER, count))
        .create();
  }

  /** A ResourceClaimTemplate {@code name} asking {@code shares} shares of one GPU (issue 46). */
  static void shareTemplate(KubernetesClient kube, String namespace, String name, int shares) {
    kube.resource(
            """
            apiVersion: resource.k8s.io/v1
            kind: ResourceClaimTemplate
            metadata: {name: %s, namespace: %s}
            spec:
              spec:
                devices:
                  requests:
                    - name: gpus
                      exactly:
                        deviceClassName: %s
                        capacity: {requests: {shares: "%d"}}
            """
                .formatted(name, namespace, DRIVER, shares))
        .create();
  }

  /**
   * The GPUs of a stack with {@code --mig-gpus K} as NVIDIA's driver would publish them, with the
   * index Slurm numbers each by (MigIT: by type in gres.conf's order, then by line): whole GPUs
   * {@code gpu-N} (0..W-1), then each MIG GPU's two 3g.40gb slices, then each one's 1g.10gb slice,
   * named as the driver names MIG devices ({@code gpu-<parent>-mig-<profile id>-<start>-<size>})
   * with their {@code profile}.
   */
  static void publishMig(KubernetesClient kube, List<String> nodes, int migGpus) {
    publish(kube, List.of()); // the DeviceClass
    int whole = 8 - migGpus;
    for (String node : nodes) {
      StringBuilder devices = new StringBuilder();
      for (int i = 0; i < whole; i++) {
        devices.append(device(DEVICE_PREFIX + i, i, ""));
      }
      for (int g = whole; g < 8; g++) {
        for (int s = 0; s < 2; s++) {
          devices.append(
              device(
                  "gpu-%d-mig-9-%d-4".formatted(g, 4 * s), whole + 2 * (g - whole) + s, "3g.40gb"));
        }
      }
      for (int g = whole; g < 8; g++) {
        devices.append(
            device("gpu-%d-mig-19-6-1".formatted(g), whole + 2 * migGpus + (g - whole), "1g.10gb"));
      }
      applySlice(kube, node, devices);
    }
  }

  /** The node's one ResourceSlice of our driver with these devices (server-side apply). */
  private static void applySlice(KubernetesClient kube, String node, CharSequence devices) {
    kube.resource(
            """
            apiVersion: resource.k8s.io/v1
            kind: ResourceSlice
            metadata: {name: e2e-gpus-%s}
            spec:
              driver: %s
              nodeName: %s
              pool: {name: %s, generation: 1, resourceSliceCount: 1}
              devices:
            %s"""
                .formatted(node, DRIVER, node, node, devices))
        .serverSideApply();
  }

  private static String device(String name, int index, String profile) {
    return """
            - name: %s
              attributes:
                index: {int: %d}
                type: {string: %s}
        %s"""
        .formatted(
            name,
            index,
            profile.isEmpty() ? "gpu" : "mig",
            profile.isEmpty() ? "" : "        profile: {string: %s}\n".formatted(profile));
  }

  /** A ResourceClaimTemplate {@code name} asking one MIG device of {@code profile} (issue 46). */
  static void migTemplate(KubernetesClient kube, String namespace, String name, String profile) {
    kube.resource(
            """
            apiVersion: resource.k8s.io/v1
            kind: ResourceClaimTemplate
            metadata: {name: %s, namespace: %s}
            spec:
              spec:
                devices:
                  requests:
                    - name: gpus
                      exactly:
                        deviceClassName: %s
                        selectors:
                          - cel: {expression: "device.attributes['%s'].profile == '%s'"}
            """
                .formatted(name, namespace, DRIVER, DRIVER, profile))
        .create();
  }

  /**
   * A pod of our scheduler whose GPUs come only through the claim template {@code template} (no
   * nvidia.com/gpu): its one container uses the claim {@code gpus}.
   */
  static PodSpec podSpec(String template) {
    return new PodSpecBuilder()
        .withSchedulerName(Scenario.SCHEDULER)
        .withTerminationGracePeriodSeconds(0L)
        .addNewResourceClaim()
        .withName("gpus")
        .withResourceClaimTemplateName(template)
        .endResourceClaim()
        .addNewContainer()
        .withName("server")
        .withImage("registry.example/model-server:1")
        .withNewResources()
        .addNewClaim()
        .withName("gpus")
        .endClaim()
        .endResources()
        .endContainer()
        .build();
  }

  /** The GPU index of a device this driver published, from its name. */
  static Optional<Integer> index(String device) {
    if (device == null || !device.startsWith(DEVICE_PREFIX)) {
      return Optional.empty();
    }
    try {
      return Optional.of(Integer.parseInt(device.substring(DEVICE_PREFIX.length())));
    } catch (NumberFormatException e) {
      return Optional.empty();
    }
  }
}
