package io.kse.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.kse.slurm.JobState;
import io.kse.slurm.SlurmJob;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * One owner per GPU (docs/gpu-ownership.md), on the real control plane and real Slurm: DRA claims
 * get exactly the GPUs Slurm gave the pod's placeholder and none a training job holds; a
 * device-plugin pod gets a whole node; a placeholder Slurm preempts holds its node until the pod is
 * gone.
 */
class GpuOwnershipE2E extends Scenario {
  static final String DRIVER = DraGpus.DRIVER;
  static final String SERVING = "serving"; // the tier without riskGpuOverlapWithSlurmJobs

  /** What the NVIDIA DRA driver would publish: a DeviceClass, and 8 GPUs per node with index. */
  @BeforeEach
  void publishGpusAsTheDraDriverWould() {
    DraGpus.publish(kube, stack.gpuNodes());
  }

  PodBuilder servingPod(String name) {
    return new PodBuilder()
        .withNewMetadata()
        .withName(name)
        .withNamespace(ns)
        .withLabels(Map.of("app", "model-server", "kse-test/tier", SERVING))
        .endMetadata()
        .withNewSpec()
        .withSchedulerName(SCHEDULER)
        .withTerminationGracePeriodSeconds(0L)
        .endSpec();
  }

  /** A serving pod whose 4 GPUs come through a ResourceClaimTemplate (no nvidia.com/gpu). */
  Pod draPod(String name) {
    return create(servingPod(name).withSpec(DraGpus.podSpec("four-gpus")));
  }

  /** The GPU indices a job holds on a node, as Slurm says ({@code gres_detail}). */
  List<Integer> indices(long jobId, String node) {
    return slurm
        .job(jobId)
        .flatMap(j -> j.gpuIndicesOn(node))
        .orElseThrow(() -> new AssertionError("Slurm names no GPU index of job " + jobId));
  }

  /** A running 4-GPU training job on every GPU node (node → job id): each has 4 GPUs left. */
  Map<String, Long> halfOfEveryNodeTraining() {
    Map<String, Long> training = new java.util.LinkedHashMap<>();
    for (String node : stack.gpuNodes()) {
      training.put(node, sbatch("training", node, 4, false));
    }
    await("training running")
        .atMost(Duration.ofSeconds(30))
        .until(
            () ->
                training.values().stream()
                    .allMatch(id -> slurm.job(id).map(Scenario::running).orElse(false)));
    return training;
  }

  @Test
  void draClaimsGetExactlyTheGpusSlurmGaveAndNoneATrainingJobHolds() {
    assumeTrue(stack.managed(), "submits training with sbatch: needs the local Slurm CLI");
    // a 4-GPU training job on every GPU node: each node has 4 GPUs left, and Slurm chose which
    Map<String, Long> training = halfOfEveryNodeTraining();
    DraGpus.template(kube, ns, "four-gpus", 4);
    List<Pod> pods = List.of(draPod("dra-0"), draPod("dra-1"));
    for (Pod p : pods) {
      Pod bound = awaitBound(p.getMetadata().getName());
      String node = bound.getSpec().getNodeName();
      SlurmJob placeholder = placeholderOf(bound);
      assertThat(placeholder.gresDetail()).as("Slurm's allocation").isNotEmpty();
      List<Integer> slurmGave = indices(placeholder.id(), node);
      ResourceClaim claim = claimOf(bound);
      List<Integer> claimGot =
          claim.getStatus().getAllocation().getDevices().getResults().stream()
              .peek(r -> assertThat(r.getDriver()).isEqualTo(DRIVER))
              .peek(r -> assertThat(r.getPool()).isEqualTo(node))
              .map(DeviceRequestAllocationResult::getDevice)
              .map(d -> DraGpus.index(d).orElseThrow())
              .sorted()
              .toList();
      List<Integer> trainingHolds = indices(training.get(node), node);
      System.out.printf(
          "[e2e] %s on %s: Slurm job %d holds GPUs %s, its claim got %s; training job %d holds"
              + " %s%n",
          p.getMetadata().getName(),
          node,
          placeholder.id(),
          slurmGave,
          claimGot,
          training.get(node),
          trainingHolds);
      assertThat(claimGot).as("the claim's devices are Slurm's GPUs").isEqualTo(slurmGave);
      assertThat(Collections.disjoint(claimGot, trainingHolds))
          .as("no GPU of the training job on " + node)
          .isTrue();
      assertThat(claim.getStatus().getReservedFor())
          .as("reserved for the pod before it was bound")
          .anyMatch(r -> r.getUid().equals(bound.getMetadata().getUid()));
      assertThat(eventReasons(p.getMetadata().getName())).contains("GpusAllocatedFromSlurm");
    }
  }

  /** A named ResourceClaim of {@code gpus} GPUs in the scenario's namespace. */
  void namedClaim(String name, int gpus) {
    kube.resource(
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
                .formatted(name, ns, gpus))
        .create();
  }

  /** A serving pod using the named claims (one container entry each). */
  Pod podWithNamedClaims(String name, String... claims) {
    PodBuilder b = servingPod(name);
    var spec = b.editSpec();
    var container =
        spec.addNewContainer().withName("server").withImage("registry.example/model-server:1");
    var resources = container.withNewResources();
    for (String c : claims) {
      resources.addNewClaim().withName(c).endClaim();
    }
    resources.endResources().endContainer();
    for (String c : claims) {
      spec.addNewResourceClaim().withName(c).withResourceClaimName(c).endResourceClaim();
    }
    return create(spec.endSpec());
  }

  ResourceClaim claim(String name) {
    return kube.resources(ResourceClaim.class).inNamespace(ns).withName(name).get();
  }

  /** Issue 26 #4: a pod's claims are written all or nothing. */
  @Test
  void aPodWhoseSecondClaimCannotBeAllocatedLeavesItsFirstClaimUntouched() {
    namedClaim("first", 2);
    namedClaim("second", 2);
    // "second" is in use by another pod, allocated to GPUs Slurm will not give ours
    Pod holder =
        create(
            new PodBuilder()
                .withNewMetadata()
                .withName("holder")
                .withNamespace(ns)
                .endMetadata()
                .withNewSpec()
                .withSchedulerName("nobody")
                .addNewContainer()
                .withName("c")
                .withImage("registry.example/x:1")
                .endContainer()
                .endSpec());
    String node = stack.gpuNodes().get(0);
    kube.resources(ResourceClaim.class)
        .inNamespace(ns)
        .withName("second")
        .subresource("status")
        .patch(
            PatchContext.of(PatchType.JSON_MERGE),
            """
            {"status": {"allocation": {"devices": {"results": [
               {"request": "gpus", "driver": "gpu.nvidia.com", "pool": "%s", "device": "gpu-6"},
               {"request": "gpus", "driver": "gpu.nvidia.com", "pool": "%s", "device": "gpu-7"}]},
              "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
               {"key": "metadata.name", "operator": "In", "values": ["%s"]}]}]}},
             "reservedFor": [{"resource": "pods", "name": "holder", "uid": "%s"}]}}
            """
                .formatted(node, node, node, holder.getMetadata().getUid()));
    podWithNamedClaims("two-claims", "first", "second");
    await("the bind refused, naming the claim in use")
        .atMost(BIND_TIMEOUT)
        .until(() -> eventReasons("two-claims").contains("BindFailed"));
    assertThat(
            events("two-claims").stream()
                .filter(e -> e.getReason().equals("BindFailed"))
                .map(io.fabric8.kubernetes.api.model.Event::getMessage))
        .anyMatch(m -> m.contains("ResourceClaim second") && m.contains("in use by [pods/holder]"));
    ResourceClaim first = claim("first");
    assertThat(first.getStatus() == null || first.getStatus().getAllocation() == null)
        .as("the first claim was not allocated for a pod that cannot run")
        .isTrue();
    assertThat(
            first.getStatus() == null
                || first.getStatus().getReservedFor() == null
                || first.getStatus().getReservedFor().isEmpty())
        .as("nor reserved for it")
        .isTrue();
    assertThat(pod("two-claims").getSpec().getNodeName()).isNull();
  }

  /**
   * Issue 26 #5: a named claim is left as Kubernetes' own allocator leaves it — with the
   * delete-protection finalizer, so the resource-claim controller deallocates it once its pod is
   * gone — and a claim allocated to GPUs Slurm no longer gives is corrected for the next pod.
   */
  @Test
  void aNamedClaimIsDeallocatedWhenItsPodGoesAndReusedWithSlurmsNewGpus() {
    namedClaim("shared", 4);
    Pod first = podWithNamedClaims("first", "shared");
    Pod bound = awaitBound("first");
    ResourceClaim allocated = claim("shared");
    assertThat(allocated.getMetadata().getFinalizers())
        .contains("resource.kubernetes.io/delete-protection");
    SlurmJob placeholder = placeholderOf(bound);
    kube.pods().inNamespace(ns).withName("first").withGracePeriod(0).delete();
    await("the resource-claim controller deallocated the claim")
        .atMost(Duration.ofSeconds(30))
        .until(
            () -> {
              ResourceClaim c = claim("shared");
              return c.getStatus() == null || c.getStatus().getAllocation() == null;
            });
    await("the placeholder of the gone pod ended")
        .atMost(Duration.ofSeconds(30))
        .until(() -> slurm.job(placeholder.id()).map(j -> j.state().isFinal()).orElse(true));
    // a claim allocated by an extender before this one (no finalizer) to GPUs nobody holds now
    String stale = stack.gpuNodes().get(stack.gpuNodes().size() - 1);
    kube.resources(ResourceClaim.class)
        .inNamespace(ns)
        .withName("shared")
        .subresource("status")
        .patch(
            PatchContext.of(PatchType.JSON_MERGE),
            """
            {"status": {"allocation": {"devices": {"results": [
               {"request": "gpus", "driver": "gpu.nvidia.com", "pool": "%s", "device": "gpu-4"},
               {"request": "gpus", "driver": "gpu.nvidia.com", "pool": "%s", "device": "gpu-5"},
               {"request": "gpus", "driver": "gpu.nvidia.com", "pool": "%s", "device": "gpu-6"},
               {"request": "gpus", "driver": "gpu.nvidia.com", "pool": "%s", "device": "gpu-7"}]},
              "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
               {"key": "metadata.name", "operator": "In", "values": ["%s"]}]}]}}}}
            """
                .formatted(stale, stale, stale, stale, stale));
    podWithNamedClaims("second", "shared");
    Pod again = awaitBound("second");
    String node = again.getSpec().getNodeName();
    List<Integer> slurmGave = indices(placeholderOf(again).id(), node);
    List<String> devices =
        claim("shared").getStatus().getAllocation().getDevices().getResults().stream()
            .peek(r -> assertThat(r.getPool()).isEqualTo(node))
            .map(DeviceRequestAllocationResult::getDevice)
            .sorted()
            .toList();
    assertThat(devices)
        .as("the claim holds the GPUs Slurm gave the new pod's placeholder")
        .isEqualTo(slurmGave.stream().map(i -> "gpu-" + i).sorted().toList());
    System.out.printf(
        "[e2e] named claim: deallocated after its pod went (first was %s), reused on %s with"
            + " Slurm's GPUs %s%n",
        first.getMetadata().getName(), node, slurmGave);
  }

  @Test
  void aDevicePluginPodAskingTwoGpusGetsAWholeNode() {
    assumeTrue(stack.managed(), "submits training with sbatch: needs the local Slurm CLI");
    Map<String, Long> training = halfOfEveryNodeTraining();
    Pod pod =
        create(
            servingPod("plugin-2")
                .editSpec()
                .addNewContainer()
                .withName("server")
                .withImage("registry.example/model-server:1")
                .withNewResources()
                .withLimits(
                    Map.of("nvidia.com/gpu", new io.fabric8.kubernetes.api.model.Quantity("2")))
                .endResources()
                .endContainer()
                .endSpec());
    Pod bound = awaitBound("plugin-2");
    String node = bound.getSpec().getNodeName();
    SlurmJob placeholder = placeholderOf(pod);
    // 4 GPUs were free on every node, yet the training job there had to go: the node is whole
    assertThat(slurm.job(training.get(node)).map(SlurmJob::state))
        .as("the training job on " + node)
        .isNotEqualTo(Optional.of(JobState.RUNNING));
    assertThat(
            jobs().stream()
                .filter(Scenario::running)
                .filter(j -> j.id() != placeholder.id())
                .filter(j -> j.nodes().contains(node))
                .toList())
        .as("no other running job on " + node)
        .isEmpty();
    String shown =
        stack.slurmCluster().cli("scontrol", "show", "job", Long.toString(placeholder.id()));
    assertThat(shown).contains("OverSubscribe=NO");
    System.out.printf(
        "[e2e] a 2-GPU device-plugin pod: Slurm job %d holds %s whole%n", placeholder.id(), node);
  }

  /**
   * Slurm preempts bound pods' placeholders (a job of the higher critical partition): each
   * placeholder holds its node within GraceTime until its pod is gone, and the critical job starts
   * only then. One pod is kept Terminating by a finalizer for a while, to show that the hold waits
   * for the pod, not for a clock; three others measure how long the hold takes.
   */
  @Test
  void aPreemptedPlaceholderHoldsItsNodeUntilThePodIsGone() {
    assumeTrue(stack.managed(), "submits jobs with sbatch: needs the local Slurm CLI");
    List<String> names = List.of("held-0", "quick-1", "quick-2", "quick-3");
    for (String n : names) {
      PodBuilder b = inferencePod(n, 8);
      if (n.startsWith("held")) {
        b.editMetadata().withFinalizers("e2e.kse.io/hold").endMetadata();
      }
      create(b);
    }
    Map<String, String> nodeOf = new java.util.LinkedHashMap<>();
    Map<String, SlurmJob> placeholder = new java.util.LinkedHashMap<>();
    for (String n : names) {
      Pod p = awaitBound(n);
      nodeOf.put(n, p.getSpec().getNodeName());
      placeholder.put(n, placeholderOf(p));
    }
    Map<String, Long> critical = new java.util.LinkedHashMap<>();
    for (String n : names) {
      critical.put(n, sbatch("critical", nodeOf.get(n)));
    }
    // Slurm chose every placeholder for preemption; each runs on within its grace time. Seen
    // from here every 100 ms: when each was first seen preempted, and when the quick ones ended.
    Map<String, Instant> preemptedAt = new java.util.LinkedHashMap<>();
    Map<String, Instant> seenPreempted = new java.util.LinkedHashMap<>();
    Map<String, Instant> seenEnded = new java.util.LinkedHashMap<>();
    await("Slurm chose the placeholders for preemption, the quick ones ended")
        .atMost(Duration.ofSeconds(25))
        .pollInterval(Duration.ofMillis(100))
        .until(
            () -> {
              for (String n : names) {
                Optional<SlurmJob> j = slurm.job(placeholder.get(n).id());
                j.filter(SlurmJob::preempting)
                    .flatMap(SlurmJob::preemptTime)
                    .ifPresent(
                        t -> {
                          preemptedAt.putIfAbsent(n, t);
                          seenPreempted.putIfAbsent(n, Instant.now());
                        });
                if (seenPreempted.containsKey(n) && j.map(x -> x.state().isFinal()).orElse(false)) {
                  seenEnded.putIfAbsent(n, Instant.now());
                }
              }
              return preemptedAt.size() == names.size() && seenEnded.size() == names.size() - 1;
            });
    assertThat(seenEnded).as("held-0's pod is still there").doesNotContainKey("held-0");
    // the held pod is Terminating (evicted) but its containers "run": its node stays held
    await("held-0 evicted")
        .atMost(Duration.ofSeconds(20))
        .until(() -> pod("held-0").getMetadata().getDeletionTimestamp() != null);
    assertThat(eventReasons("held-0")).contains("SlurmPreemptingPlaceholder");
    Instant watchUntil = Instant.now().plusSeconds(8);
    while (Instant.now().isBefore(watchUntil)) {
      assertThat(slurm.job(critical.get("held-0")).map(SlurmJob::state))
          .as("the critical job waits while held-0 is Terminating")
          .contains(JobState.PENDING);
      assertThat(slurm.job(placeholder.get("held-0").id()).map(SlurmJob::state))
          .contains(JobState.RUNNING);
      sleepMs(250);
    }
    // the kubelet confirms the containers stopped: the pod goes, the node goes to Slurm. The pod
    // cannot be gone before this moment (the finalizer held it), so the critical job may not start
    // before it either; when the test sees it gone is later by its polling
    assertThat(slurm.job(critical.get("held-0")).map(SlurmJob::state)).contains(JobState.PENDING);
    Instant released = Instant.now();
    kube.pods()
        .inNamespace(ns)
        .withName("held-0")
        .patch(PatchContext.of(PatchType.JSON_MERGE), "{\"metadata\":{\"finalizers\":null}}");
    await("held-0 gone").atMost(Duration.ofSeconds(10)).until(() -> pod("held-0") == null);
    Instant seenGone = Instant.now();
    await("every critical job running")
        .atMost(Duration.ofSeconds(40))
        .until(
            () ->
                critical.values().stream()
                    .allMatch(id -> slurm.job(id).map(Scenario::running).orElse(false)));
    Instant criticalStart =
        slurm.job(critical.get("held-0")).orElseThrow().startTime().orElseThrow();
    System.out.printf(
        "[e2e] held-0: finalizer removed at %s, pod seen gone at %s, the critical job on %s"
            + " started at %s (Slurm, 1 s resolution)%n",
        released, seenGone, nodeOf.get("held-0"), criticalStart);
    assertThat(criticalStart)
        .as("the next Slurm job started only once the pod could go")
        .isAfterOrEqualTo(released.truncatedTo(ChronoUnit.SECONDS)); // Slurm floors to seconds
    // how long each preempted placeholder held its node: Slurm's preempt and end times (1 s
    // resolution), and as seen from here (seen preempted -> seen ended, 100 ms polls)
    List<Long> holdsMs = new ArrayList<>();
    for (String n : names) {
      SlurmJob ended = slurm.job(placeholder.get(n).id()).orElseThrow();
      assertThat(ended.state().isFinal()).isTrue();
      long held = Duration.between(preemptedAt.get(n), ended.endTime().orElseThrow()).toSeconds();
      String seen = "";
      if (seenEnded.containsKey(n)) {
        long ms = Duration.between(seenPreempted.get(n), seenEnded.get(n)).toMillis();
        holdsMs.add(ms);
        seen = ", seen " + ms + " ms";
      }
      System.out.printf(
          "[e2e] %s: placeholder %d held %s for %d s after Slurm preempted it (Slurm's times%s)%n",
          n, ended.id(), nodeOf.get(n), held, seen);
    }
    Collections.sort(holdsMs);
    System.out.printf(
        "[e2e] hold after a preemption signal, pod stopping at once: n=%d p50=%d ms max=%d ms"
            + " (seen preempted -> seen ended, 100 ms polls)%n",
        holdsMs.size(), holdsMs.get(holdsMs.size() / 2), holdsMs.get(holdsMs.size() - 1));
  }

  static void sleepMs(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }
}
