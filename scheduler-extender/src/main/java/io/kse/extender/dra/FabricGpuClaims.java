package io.kse.extender.dra;

import io.fabric8.kubernetes.api.model.NodeSelectorBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodResourceClaim;
import io.fabric8.kubernetes.api.model.PodResourceClaimStatus;
import io.fabric8.kubernetes.api.model.resource.v1.AllocationResultBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAttribute;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequest;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResultBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimConsumerReference;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimConsumerReferenceBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimStatus;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * {@link GpuClaims} through the API server ({@code resource.k8s.io/v1}). Reads a pod's claims (or
 * the templates they come from) for the GPU count, the node's ResourceSlices for the devices, and
 * writes {@code status.allocation} and {@code status.reservedFor}: our scheduler profile leaves DRA
 * allocation to us (manifests/base/scheduler-config.yaml disables DynamicResources).
 */
public final class FabricGpuClaims implements GpuClaims {
  private final KubernetesClient client;
  private final Set<String> gpuClasses;
  private final String driver;
  private final String indexAttribute;

  /**
   * @param gpuClasses DeviceClasses whose requests are GPUs Slurm allocates
   * @param driver the DRA driver that publishes the GPUs (e.g. {@code gpu.nvidia.com})
   * @param indexAttribute the device attribute carrying the GPU index Slurm's IDX matches
   */
  public FabricGpuClaims(
      KubernetesClient client, Set<String> gpuClasses, String driver, String indexAttribute) {
    this.client = client;
    this.gpuClasses = Set.copyOf(gpuClasses);
    this.driver = driver;
    this.indexAttribute = indexAttribute;
  }

  @Override
  public long gpusAsked(Pod pod) {
    if (!GpuClaims.hasClaims(pod)) {
      return 0;
    }
    return GpuAllocationPlan.gpusAsked(templateRequests(pod), gpuClasses);
  }

  @Override
  public String allocate(Pod pod, String node, List<Integer> indices) {
    String ns = pod.getMetadata().getNamespace();
    Map<String, ResourceClaim> claims = claims(pod);
    List<GpuRequest> requests = new ArrayList<>();
    claims.values().forEach(c -> requests.addAll(requests(c.getMetadata().getName(), c)));
    List<GpuAllocationPlan.Assignment> plan =
        GpuAllocationPlan.assign(requests, gpuClasses, indices, published(node), node);
    List<String> said = new ArrayList<>();
    for (ResourceClaim claim : claims.values()) {
      String name = claim.getMetadata().getName();
      List<DeviceRequestAllocationResult> results =
          plan.stream()
              .filter(a -> a.claim().equals(name))
              .map(
                  a ->
                      new DeviceRequestAllocationResultBuilder()
                          .withRequest(a.request())
                          .withDriver(a.device().driver())
                          .withPool(a.device().pool())
                          .withDevice(a.device().name())
                          .build())
              .toList();
      write(ns, claim, results, pod, node);
      said.add(
          name
              + "="
              + plan.stream()
                  .filter(a -> a.claim().equals(name))
                  .map(a -> a.device().name() + "(index " + a.device().index() + ")")
                  .collect(Collectors.joining(",")));
    }
    return String.join(" ", said);
  }

  /** Sets allocation and reservation; a claim allocated to these very devices is only reserved. */
  private void write(
      String ns,
      ResourceClaim claim,
      List<DeviceRequestAllocationResult> results,
      Pod pod,
      String node) {
    ResourceClaimStatus status =
        claim.getStatus() == null ? new ResourceClaimStatus() : claim.getStatus();
    if (status.getAllocation() != null) {
      List<String> have = keys(status.getAllocation().getDevices().getResults());
      if (!have.equals(keys(results))) {
        throw new ClaimProblem(
            "ResourceClaim "
                + claim.getMetadata().getName()
                + " is already allocated to "
                + have
                + ", not to the GPUs Slurm gave this pod "
                + keys(results));
      }
    } else {
      status.setAllocation(
          new AllocationResultBuilder()
              .withNewDevices()
              .withResults(results)
              .endDevices()
              .withNodeSelector(
                  new NodeSelectorBuilder()
                      .addNewNodeSelectorTerm()
                      .addNewMatchField()
                      .withKey("metadata.name")
                      .withOperator("In")
                      .withValues(node)
                      .endMatchField()
                      .endNodeSelectorTerm()
                      .build())
              .build());
    }
    List<ResourceClaimConsumerReference> reserved =
        status.getReservedFor() == null
            ? new ArrayList<>()
            : new ArrayList<>(status.getReservedFor());
    String uid = pod.getMetadata().getUid();
    if (reserved.stream().noneMatch(r -> uid.equals(r.getUid()))) {
      reserved.add(
          new ResourceClaimConsumerReferenceBuilder()
              .withResource("pods")
              .withName(pod.getMetadata().getName())
              .withUid(uid)
              .build());
    }
    status.setReservedFor(reserved);
    claim.setStatus(status);
    try {
      client.resources(ResourceClaim.class).inNamespace(ns).resource(claim).updateStatus();
    } catch (KubernetesClientException e) {
      throw new ClaimProblem(
          "writing the allocation of ResourceClaim "
              + claim.getMetadata().getName()
              + " failed: "
              + e.getCode()
              + " "
              + e.getStatus().getMessage());
    }
  }

  private static List<String> keys(List<DeviceRequestAllocationResult> results) {
    return results.stream()
        .map(r -> r.getRequest() + "/" + r.getDriver() + "/" + r.getPool() + "/" + r.getDevice())
        .sorted()
        .toList();
  }

  /** The node's GPUs from its ResourceSlices of our driver. */
  private List<GpuDevice> published(String node) {
    List<GpuDevice> out = new ArrayList<>();
    for (ResourceSlice s :
        client.resources(ResourceSlice.class).withField("spec.nodeName", node).list().getItems()) {
      if (!driver.equals(s.getSpec().getDriver()) || s.getSpec().getDevices() == null) {
        continue;
      }
      for (var d : s.getSpec().getDevices()) {
        DeviceAttribute a =
            d.getAttributes() == null ? null : d.getAttributes().get(indexAttribute);
        if (a != null && a.getInt() != null) {
          out.add(new GpuDevice(driver, s.getSpec().getPool().getName(), d.getName(), a.getInt()));
        }
      }
    }
    if (out.isEmpty()) {
      throw new ClaimProblem(
          "no ResourceSlice of driver "
              + driver
              + " publishes GPUs with attribute "
              + indexAttribute
              + " for node "
              + node);
    }
    return out;
  }

  /** The pod's claims, in the pod's order, by their generated or given names. */
  private Map<String, ResourceClaim> claims(Pod pod) {
    String ns = pod.getMetadata().getNamespace();
    Map<String, ResourceClaim> out = new LinkedHashMap<>();
    Pod fresh = null;
    for (PodResourceClaim c : pod.getSpec().getResourceClaims()) {
      String name = c.getResourceClaimName();
      if (name == null) {
        name = generatedName(pod, c.getName());
        if (name == null) { // the informer may lag the resourceclaim controller: ask once
          fresh =
              fresh != null
                  ? fresh
                  : client.pods().inNamespace(ns).withName(pod.getMetadata().getName()).get();
          name = fresh == null ? null : generatedName(fresh, c.getName());
        }
        if (name == null) {
          throw new ClaimProblem(
              "the ResourceClaim of pod claim "
                  + c.getName()
                  + " is not created yet (kube-controller-manager's resourceclaim controller)");
        }
      }
      out.put(name, claim(ns, name));
    }
    return out;
  }

  private ResourceClaim claim(String ns, String name) {
    ResourceClaim claim =
        client.resources(ResourceClaim.class).inNamespace(ns).withName(name).get();
    if (claim == null) {
      throw new ClaimProblem("ResourceClaim " + ns + "/" + name + " does not exist");
    }
    return claim;
  }

  private static String generatedName(Pod pod, String entry) {
    if (pod.getStatus() == null || pod.getStatus().getResourceClaimStatuses() == null) {
      return null;
    }
    return pod.getStatus().getResourceClaimStatuses().stream()
        .filter(s -> entry.equals(s.getName()))
        .map(PodResourceClaimStatus::getResourceClaimName)
        .findFirst()
        .orElse(null);
  }

  /** The GPU requests of every claim entry, read from the templates or the named claims. */
  private List<GpuRequest> templateRequests(Pod pod) {
    String ns = pod.getMetadata().getNamespace();
    List<GpuRequest> out = new ArrayList<>();
    for (PodResourceClaim c : pod.getSpec().getResourceClaims()) {
      if (c.getResourceClaimTemplateName() != null) {
        ResourceClaimTemplate t =
            client
                .resources(ResourceClaimTemplate.class)
                .inNamespace(ns)
                .withName(c.getResourceClaimTemplateName())
                .get();
        if (t == null) {
          throw new ClaimProblem(
              "ResourceClaimTemplate "
                  + ns
                  + "/"
                  + c.getResourceClaimTemplateName()
                  + " (pod claim "
                  + c.getName()
                  + ") does not exist");
        }
        out.addAll(requests(c.getName(), t.getSpec().getSpec().getDevices().getRequests()));
      } else if (c.getResourceClaimName() != null) {
        out.addAll(requests(c.getResourceClaimName(), claim(ns, c.getResourceClaimName())));
      }
    }
    return out;
  }

  private static List<GpuRequest> requests(String claim, ResourceClaim c) {
    return requests(claim, c.getSpec().getDevices().getRequests());
  }

  private static List<GpuRequest> requests(String claim, List<DeviceRequest> requests) {
    List<GpuRequest> out = new ArrayList<>();
    for (DeviceRequest r : requests == null ? List.<DeviceRequest>of() : requests) {
      if (r.getExactly() == null) {
        out.add(new GpuRequest(claim, r.getName(), "", "", 0, true));
        continue;
      }
      var e = r.getExactly();
      out.add(
          new GpuRequest(
              claim,
              r.getName(),
              e.getDeviceClassName(),
              e.getAllocationMode() == null ? "ExactCount" : e.getAllocationMode(),
              e.getCount() == null ? 1 : e.getCount(),
              false));
    }
    return out;
  }
}
