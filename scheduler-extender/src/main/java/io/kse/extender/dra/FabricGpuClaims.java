package io.kse.extender.dra;

import io.fabric8.kubernetes.api.model.NodeSelectorBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.resource.v1.AllocationResultBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResultBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimConsumerReference;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimConsumerReferenceBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimStatus;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.util.ArrayList;
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
  private static final org.slf4j.Logger LOG =
      org.slf4j.LoggerFactory.getLogger(FabricGpuClaims.class);
  private static final com.fasterxml.jackson.databind.ObjectMapper JSON =
      new com.fasterxml.jackson.databind.ObjectMapper();
  private final KubernetesClient client;
  private final Set<String> gpuClasses;
  private final ClaimReads reads;
  private final java.util.function.Supplier<String> shareCapacity;

  /**
   * @param gpuClasses DeviceClasses whose requests are GPUs Slurm allocates
   * @param driver the DRA driver that publishes the GPUs (e.g. {@code gpu.nvidia.com})
   * @param indexAttribute the device attribute carrying the GPU index Slurm's IDX matches
   * @param shareCapacity the device capacity a request names to ask shares of a GPU (the policy's
   *     {@code cluster.gpuShares.capacity})
   */
  public FabricGpuClaims(
      KubernetesClient client,
      Set<String> gpuClasses,
      String driver,
      String indexAttribute,
      java.util.function.Supplier<String> shareCapacity) {
    this.client = client;
    this.gpuClasses = Set.copyOf(gpuClasses);
    this.reads = new ClaimReads(client, driver, indexAttribute, shareCapacity);
    this.shareCapacity = shareCapacity;
  }

  public FabricGpuClaims(
      KubernetesClient client, Set<String> gpuClasses, String driver, String indexAttribute) {
    this(client, gpuClasses, driver, indexAttribute, () -> "shares");
  }

  @Override
  public long gpusAsked(Pod pod) {
    if (!GpuClaims.hasClaims(pod)) {
      return 0;
    }
    return GpuAllocationPlan.gpusAsked(reads.templateRequests(pod), gpuClasses);
  }

  @Override
  public Asks asks(Pod pod) {
    if (!GpuClaims.hasClaims(pod)) {
      return new Asks(0, 0);
    }
    List<GpuRequest> requests = reads.templateRequests(pod); // read once for both
    return new Asks(
        GpuAllocationPlan.gpusAsked(requests, gpuClasses),
        GpuAllocationPlan.sharesAsked(requests, gpuClasses),
        GpuAllocationPlan.migAsked(requests, gpuClasses));
  }

  @Override
  public long sharesAsked(Pod pod) {
    if (!GpuClaims.hasClaims(pod)) {
      return 0;
    }
    return GpuAllocationPlan.sharesAsked(reads.templateRequests(pod), gpuClasses);
  }

  @Override
  public String allocateShare(Pod pod, String node, int gpuIndex, long shares) {
    Map<String, ResourceClaim> claims = reads.claims(pod);
    List<GpuRequest> requests = new ArrayList<>();
    claims.values().forEach(c -> requests.addAll(reads.requests(c.getMetadata().getName(), c)));
    GpuAllocationPlan.Assignment a =
        GpuAllocationPlan.assignShare(requests, gpuIndex, shares, reads.published(node), node);
    // a share of its own on the GPU Slurm put the shards on; the API server keeps the claim's
    // allocation immutable, so a retry keeps the first share (ClaimWrite compares devices)
    String share = java.util.UUID.randomUUID().toString();
    return write(
        pod,
        node,
        claims,
        List.of(a),
        x ->
            new DeviceRequestAllocationResultBuilder()
                .withRequest(x.request())
                .withDriver(x.device().driver())
                .withPool(x.device().pool())
                .withDevice(x.device().name())
                .withShareID(share)
                .withConsumedCapacity(
                    Map.of(
                        shareCapacity.get(),
                        new io.fabric8.kubernetes.api.model.Quantity(Long.toString(shares))))
                .build(),
        x -> x.device().name() + "(index " + x.device().index() + ", " + shares + " shares)");
  }

  /**
   * Kubernetes' own allocator puts this finalizer on a claim before allocating it; the
   * resource-claim controller then deallocates the claim once no pod uses it any more (and removes
   * the finalizer). Without it, a named claim stays allocated to GPUs Slurm has since given away.
   */
  static final String DELETE_PROTECTION = "resource.kubernetes.io/delete-protection";

  @Override
  public String allocate(Pod pod, String node, List<Integer> indices) {
    Map<String, ResourceClaim> claims = reads.claims(pod);
    List<GpuRequest> requests = new ArrayList<>();
    claims.values().forEach(c -> requests.addAll(reads.requests(c.getMetadata().getName(), c)));
    List<GpuAllocationPlan.Assignment> plan =
        GpuAllocationPlan.assign(requests, gpuClasses, indices, reads.published(node), node);
    return write(
        pod,
        node,
        claims,
        plan,
        a ->
            new DeviceRequestAllocationResultBuilder()
                .withRequest(a.request())
                .withDriver(a.device().driver())
                .withPool(a.device().pool())
                .withDevice(a.device().name())
                .build(),
        a -> a.device().name() + "(index " + a.device().index() + ")");
  }

  /**
   * Writes every claim's allocation of the {@code plan}, each assignment as {@code result} makes
   * it; all or none: every claim's new state is decided before any is written, and one that cannot
   * be written undoes those written before it.
   */
  private String write(
      Pod pod,
      String node,
      Map<String, ResourceClaim> claims,
      List<GpuAllocationPlan.Assignment> plan,
      java.util.function.Function<GpuAllocationPlan.Assignment, DeviceRequestAllocationResult>
          result,
      java.util.function.Function<GpuAllocationPlan.Assignment, String> saying) {
    String ns = pod.getMetadata().getNamespace();
    List<ClaimWrite> writes = new ArrayList<>();
    List<String> said = new ArrayList<>();
    for (ResourceClaim claim : claims.values()) {
      String name = claim.getMetadata().getName();
      List<DeviceRequestAllocationResult> results =
          plan.stream().filter(a -> a.claim().equals(name)).map(result).toList();
      writes.add(ClaimWrite.of(claim, results, pod, node));
      said.add(
          name
              + "="
              + plan.stream()
                  .filter(a -> a.claim().equals(name))
                  .map(saying)
                  .collect(Collectors.joining(",")));
    }
    List<ClaimWrite> written = new ArrayList<>();
    try {
      for (ClaimWrite w : writes) {
        write(ns, w);
        written.add(w);
      }
    } catch (ClaimProblem e) {
      for (int i = written.size() - 1; i >= 0; i--) {
        undo(ns, written.get(i), pod);
      }
      throw e;
    }
    return String.join(" ", said);
  }

  /**
   * What one claim must become: allocated to {@code results} on the node (kept if already so),
   * reserved for the pod, and carrying {@link #DELETE_PROTECTION}.
   *
   * @param allocating whether this write sets (or corrects) the allocation, not only reserves
   * @param correcting whether it replaces an allocation no pod uses any more (the API server keeps
   *     an allocation immutable: it is cleared first, then set)
   */
  record ClaimWrite(
      ResourceClaim claim, ResourceClaimStatus status, boolean allocating, boolean correcting) {
    /** Decides the claim's new status, or says why it cannot be allocated for this pod. */
    static ClaimWrite of(
        ResourceClaim claim, List<DeviceRequestAllocationResult> results, Pod pod, String node) {
      String uid = pod.getMetadata().getUid();
      ResourceClaimStatus old =
          claim.getStatus() == null ? new ResourceClaimStatus() : claim.getStatus();
      List<ResourceClaimConsumerReference> reserved =
          old.getReservedFor() == null ? new ArrayList<>() : new ArrayList<>(old.getReservedFor());
      List<String> others =
          reserved.stream()
              .filter(r -> !uid.equals(r.getUid()))
              .map(r -> r.getResource() + "/" + r.getName())
              .toList();
      boolean allocating = old.getAllocation() == null;
      boolean correcting = false;
      if (!allocating) {
        List<String> have = keys(old.getAllocation().getDevices().getResults());
        if (!have.equals(keys(results))) {
          if (!others.isEmpty()) {
            throw new ClaimProblem(
                "ResourceClaim "
                    + claim.getMetadata().getName()
                    + " is allocated to "
                    + have
                    + " and in use by "
                    + others
                    + ", not to the GPUs Slurm gave this pod "
                    + keys(results));
          }
          // allocated for a consumer that is gone (by an extender before this one, which did
          // not mark its claims for deallocation): Slurm's GPUs are the truth, correct it
          allocating = true;
          correcting = true;
          reserved.clear();
        }
      }
      ResourceClaimStatus next = new ResourceClaimStatus();
      next.setDevices(correcting ? null : old.getDevices()); // a driver's status of the old devices
      next.setAllocation(
          allocating
              ? new AllocationResultBuilder()
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
                  .build()
              : old.getAllocation());
      if (reserved.stream().noneMatch(r -> uid.equals(r.getUid()))) {
        reserved.add(
            new ResourceClaimConsumerReferenceBuilder()
                .withResource("pods")
                .withName(pod.getMetadata().getName())
                .withUid(uid)
                .build());
      }
      next.setReservedFor(reserved);
      return new ClaimWrite(claim, next, allocating, correcting);
    }

    boolean protectedFromDeletion() {
      List<String> f = claim.getMetadata().getFinalizers();
      return f != null && f.contains(DELETE_PROTECTION);
    }

    /** Nothing to write: already allocated to these GPUs, reserved for the pod, protected. */
    boolean unchanged() {
      return !allocating
          && protectedFromDeletion()
          && claim.getStatus() != null
          && status.getReservedFor().equals(claim.getStatus().getReservedFor());
    }
  }

  /** The finalizer first (so the resource-claim controller will deallocate), then the status. */
  private void write(String ns, ClaimWrite w) {
    if (w.unchanged()) {
      return;
    }
    String name = w.claim().getMetadata().getName();
    ResourceClaim claim = w.claim();
    try {
      if (!w.protectedFromDeletion()) {
        List<String> finalizers =
            claim.getMetadata().getFinalizers() == null
                ? new ArrayList<>()
                : new ArrayList<>(claim.getMetadata().getFinalizers());
        finalizers.add(DELETE_PROTECTION);
        // a merge patch naming the version read: it fails rather than overwrite a change
        String patch =
            JSON.createObjectNode()
                .set(
                    "metadata",
                    JSON.createObjectNode()
                        .put("resourceVersion", claim.getMetadata().getResourceVersion())
                        .set("finalizers", JSON.valueToTree(finalizers)))
                .toString();
        claim =
            client
                .resources(ResourceClaim.class)
                .inNamespace(ns)
                .withName(name)
                .patch(PatchContext.of(PatchType.JSON_MERGE), patch);
      }
      if (w.correcting()) {
        claim.setStatus(new ResourceClaimStatus()); // deallocated, as the claim controller does
        claim =
            client.resources(ResourceClaim.class).inNamespace(ns).resource(claim).updateStatus();
        LOG.info(
            "claim_corrected claim={}/{} reason=\"allocated to GPUs no pod uses, not Slurm's\"",
            ns,
            name);
      }
      claim.setStatus(w.status());
      client.resources(ResourceClaim.class).inNamespace(ns).resource(claim).updateStatus();
    } catch (KubernetesClientException e) {
      throw new ClaimProblem(
          "writing the allocation of ResourceClaim "
              + name
              + " failed: "
              + e.getCode()
              + " "
              + (e.getStatus() == null ? e.getMessage() : e.getStatus().getMessage()));
    }
  }

  /** Takes back what {@link #write} did for the pod, as far as the claim still shows it. */
  private void undo(String ns, ClaimWrite w, Pod pod) {
    String name = w.claim().getMetadata().getName();
    try {
      ResourceClaim now = reads.claim(ns, name);
      ResourceClaimStatus status = now.getStatus();
      if (status == null) {
        return;
      }
      List<ResourceClaimConsumerReference> reserved =
          status.getReservedFor() == null
              ? new ArrayList<>()
              : new ArrayList<>(status.getReservedFor());
      reserved.removeIf(r -> pod.getMetadata().getUid().equals(r.getUid()));
      status.setReservedFor(reserved);
      if (w.allocating() && reserved.isEmpty()) {
        status.setAllocation(null);
      }
      client.resources(ResourceClaim.class).inNamespace(ns).resource(now).updateStatus();
    } catch (KubernetesClientException | ClaimProblem e) {
      // the resource-claim controller deallocates it once the pod is gone (finalizer set first)
      LOG.warn(
          "claim_rollback_failed claim={}/{} pod={} error={}",
          ns,
          name,
          pod.getMetadata().getName(),
          e.getMessage());
    }
  }

  private static List<String> keys(List<DeviceRequestAllocationResult> results) {
    return results.stream()
        .map(r -> r.getRequest() + "/" + r.getDriver() + "/" + r.getPool() + "/" + r.getDevice())
        .sorted()
        .toList();
  }
}
