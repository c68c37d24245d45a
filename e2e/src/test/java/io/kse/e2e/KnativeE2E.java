package io.kse.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceList;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.NonNamespaceOperation;
import io.fabric8.kubernetes.client.dsl.Resource;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.kse.slurm.JobState;
import io.kse.slurm.PlaceholderTag;
import io.kse.slurm.SlurmJob;
import java.nio.file.Files;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Knative Serving — its real controller, webhook, autoscaler and activator, started on the stack by
 * {@code e2e/cluster/stack knative-start} — puts revision pods on Slurm-scheduled capacity through
 * us. There is no pod network here, so the autoscaler has no request metrics: the scenarios give
 * revisions {@code target-burst-capacity: -1} (the activator always in the path; Knative then needs
 * no pod metrics and reads zero demand) and drive the scale with Knative's own scale bounds
 * (docs/knative.md). Cold-start figures are printed with {@code [e2e] knative}.
 */
class KnativeE2E extends Scenario {
  static final String SERVING = "serving.knative.dev/v1";
  static final String MIN_SCALE = "autoscaling.knative.dev/min-scale";

  /** How long a placeholder may outlive its pod: the bound for a scale to zero. */
  static final Duration RELEASE = Duration.ofSeconds(2);

  @BeforeAll
  static void knative() {
    E2eStack stack = E2eStack.shared();
    assumeTrue(stack.managed(), "starts Knative Serving on the local stack");
    stack.startKnative();
  }

  /**
   * Scenario 1: the shipped example Service names our scheduler; Knative's webhook admits it only
   * with the overlay's flag on; its revision's pod preempts training through Slurm.
   */
  @Test
  void theExampleServiceIsAdmittedOnlyWithTheFlagAndItsPodPreemptsTraining() throws Exception {
    assumeTrue(stack.managed(), "submits training with sbatch: needs the local Slurm CLI");
    GenericKubernetesResource example = example("manifests/examples/knative-service.yaml");
    setFeature("kubernetes.podspec-schedulername", "disabled");
    try {
      await("Knative's webhook refuses schedulerName with the flag off")
          .atMost(Duration.ofSeconds(30))
          .pollInterval(Duration.ofMillis(200))
          .untilAsserted(
              () ->
                  assertThatThrownBy(() -> services().resource(example).dryRun().create())
                      .isInstanceOf(KubernetesClientException.class)
                      .hasMessageContaining("schedulerName"));
    } finally {
      setFeature("kubernetes.podspec-schedulername", "enabled");
    }
    await("Knative's webhook admits it with the flag on")
        .atMost(Duration.ofSeconds(30))
        .pollInterval(Duration.ofMillis(200))
        .ignoreExceptions()
        .until(() -> services().resource(example).dryRun().create() != null);

    Map<Long, String> training = busyEveryGpuNode("training");
    services().resource(example).create();
    Pod bound = awaitServicePods("llm", 1).get(0);
    String node = bound.getSpec().getNodeName();
    assertThat(bound.getSpec().getSchedulerName()).isEqualTo(SCHEDULER);
    SlurmJob placeholder = placeholderOf(bound);
    assertThat(placeholder.nodes()).containsExactly(node);
    assertThat(placeholder.partition()).isEqualTo("inference");
    List<SlurmJob> displaced = displaced(training);
    assertThat(displaced).as("the training job Slurm preempted for the pod").hasSize(1);
    assertThat(training.get(displaced.get(0).id())).isEqualTo(node);
    await("the pod's Events name the preempted job")
        .atMost(Duration.ofSeconds(15))
        .untilAsserted(
            () ->
                assertThat(eventReasons(bound.getMetadata().getName()))
                    .contains("PreemptedSlurmJob"));
  }

  /**
   * Scenario 2: one revision scaled 0 → 3 → 0 → 3 by Knative's autoscaler (its min-scale bound on
   * the revision's PodAutoscaler, as demand would); placeholders follow the pods, and none lives
   * more than {@link #RELEASE} after its pod is gone.
   */
  @Test
  void scaleZeroThreeZeroThreePlaceholdersFollowThePods() {
    String revision = createAtZero("scaled");
    try (Lifecycles seen = new Lifecycles()) {
      for (int round = 1; round <= 2; round++) {
        Instant scaleUp = setMinScale(revision, 3);
        List<Pod> pods = awaitServicePods("scaled", 3);
        for (Pod p : pods) {
          SlurmJob job = placeholderOf(p);
          if (job.state() != JobState.RUNNING && goneOrGoing(p)) {
            continue; // Knative took this pod back after its bind: its placeholder ends with it
          }
          assertThat(job.state())
              .as("placeholder %d of %s", job.id(), p.getMetadata().getName())
              .isEqualTo(JobState.RUNNING);
          assertThat(job.nodes()).containsExactly(p.getSpec().getNodeName());
        }
        seen.coldStarts(scaleUp, pods, "free capacity, 3 pods at once");
        setMinScale(revision, 0);
        awaitServicePods("scaled", 0);
        await("no live placeholder once the pods are gone")
            .atMost(RELEASE.plusSeconds(3))
            .pollInterval(Duration.ofMillis(100))
            .until(() -> activePlaceholders(ns).isEmpty());
      }
      seen.assertPlaceholdersFollowedThePods(6);
    }
  }

  /**
   * Scenario 3: a new revision rolls out (the Service's template changes); the old revision's
   * placeholders end as its pods go, the new ones are placed, and at no moment are there more
   * placeholders than pods (a pod gone less than {@link #RELEASE} ago still counts: its job is
   * being cancelled). The test plays the networking layer: without one no Route becomes Ready, and
   * Knative keeps every revision it ever routed to.
   */
  @Test
  void aNewRevisionRollsOutWithNeverMorePlaceholdersThanPods() {
    try (NetworkingLayer net = new NetworkingLayer();
        Lifecycles seen = new Lifecycles()) {
      services().resource(service("rolled", "dev.local/model-server:1", 2)).create();
      List<Pod> first = awaitRevisionPods("rolled-00001", 2);
      await("the Service Ready (its Route routed by the stand-in networking layer)")
          .atMost(Duration.ofSeconds(60))
          .until(() -> ready(services().withName("rolled").get()));

      services()
          .withName("rolled")
          .patch(
              PatchContext.of(PatchType.JSON_MERGE),
              "{\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"image\":\"dev.local/model-server:2\","
                  + "\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"1\"}}}]}}}}");
      List<Pod> second = awaitRevisionPods("rolled-00002", 2);
      for (Pod p : second) {
        assertThat(running(placeholderOf(p))).isTrue();
      }
      awaitRevisionPods("rolled-00001", 0);
      await("the old revision's placeholders end")
          .atMost(RELEASE.plusSeconds(3))
          .pollInterval(Duration.ofMillis(100))
          .until(
              () ->
                  first.stream()
                      .map(p -> placeholderOf(p.getMetadata().getUid()))
                      .allMatch(j -> j.map(x -> x.state().isFinal()).orElse(true)));
      assertThat(activePlaceholders(ns)).hasSize(2);
      seen.assertPlaceholdersFollowedThePods(4);
    }
  }

  /**
   * Cold start as users see it: a revision at zero is asked for one pod; how long until the pod is
   * bound, on free capacity and when Slurm must preempt training for it. Printed, not asserted.
   */
  @Test
  void coldStartFromZeroWithAndWithoutPreemption() {
    assumeTrue(stack.managed(), "submits training with sbatch: needs the local Slurm CLI");
    String revision = createAtZero("cold");
    try (Lifecycles seen = new Lifecycles()) {
      for (boolean preempting : new boolean[] {false, true}) {
        for (int round = 0; round < 5; round++) {
          if (preempting) {
            cancelSbatchJobs(); // requeued training from the last round must not linger
            busyEveryGpuNode("training");
          }
          Instant scaleUp = setMinScale(revision, 1);
          List<Pod> pods = awaitServicePods("cold", 1);
          if (preempting) {
            await("the pod's Events name the preempted job")
                .atMost(Duration.ofSeconds(15))
                .until(
                    () ->
                        eventReasons(pods.get(0).getMetadata().getName())
                            .contains("PreemptedSlurmJob"));
          }
          seen.coldStarts(scaleUp, pods, preempting ? "preempting training" : "free capacity");
          setMinScale(revision, 0);
          awaitServicePods("cold", 0);
          await("no live placeholder")
              .atMost(RELEASE.plusSeconds(3))
              .until(() -> activePlaceholders(ns).isEmpty());
        }
      }
      seen.printColdStarts();
      seen.assertPlaceholdersFollowedThePods(10);
    }
  }

  /**
   * Issue 46 (a stack with {@code --gpu-shards 4}): a Service of quarter-GPU replicas — Knative
   * drops DRA claims from its template, so its pods carry {@code kse.io/gpu-share-template} and the
   * admission policy gives them the claim — scaled 0 → 8 holds 2 GPUs, not 8, and scales back to
   * nothing held.
   */
  @Test
  void quarterGpuReplicasScaleOutOntoTwoGpusAndBack() {
    int shards = Integer.parseInt(stack.envIfSet("KSE_LAB_GPU_SHARDS").orElse("0"));
    assumeTrue(shards == 4, "needs a stack with 4 GPU shards (e2e/cluster/stack --gpu-shards 4)");
    assumeTrue(
        !stack.envIfSet("KSE_LAB_SLURM").orElse("22.05").equals("22.05"),
        "Slurm 22.05 mixes shards and whole GPUs: part of a GPU is refused there (SharedGpuE2E)");
    DraGpus.publish(kube, stack.gpuNodes(), shards);
    DraGpus.shareTemplate(kube, ns, "quarter", 1);
    GenericKubernetesResource svc = service("small", "dev.local/small-model:1", 0);
    @SuppressWarnings("unchecked")
    Map<String, Object> template =
        (Map<String, Object>)
            ((Map<String, Object>) svc.getAdditionalProperties().get("spec")).get("template");
    @SuppressWarnings("unchecked")
    Map<String, Object> meta = (Map<String, Object>) template.get("metadata");
    @SuppressWarnings("unchecked")
    Map<String, Object> annotations = (Map<String, Object>) meta.get("annotations");
    annotations.put("kse.io/gpu-share-template", "quarter");
    meta.put("labels", Map.of("kse-test/tier", "shared"));
    @SuppressWarnings("unchecked")
    Map<String, Object> container =
        ((List<Map<String, Object>>) ((Map<String, Object>) template.get("spec")).get("containers"))
            .get(0);
    container.remove("resources"); // no whole GPU: the claim is its share
    services().resource(svc).create();
    String revision = "small-00001";
    await("the revision's PodAutoscaler")
        .atMost(Duration.ofSeconds(30))
        .until(() -> pa(revision).get() != null);
    setMinScale(revision, 8);
    awaitServicePods("small", 8);
    java.util.Set<String> gpus = new java.util.TreeSet<>();
    // read again until 8 live replicas all hold their share: Knative may take one back just after
    // its bind and make another
    await("8 live replicas, each with its share")
        .atMost(Duration.ofSeconds(60))
        .pollInterval(Duration.ofSeconds(1))
        .untilAsserted(
            () -> {
              gpus.clear();
              List<Pod> live =
                  kube
                      .pods()
                      .inNamespace(ns)
                      .withLabel("serving.knative.dev/service", "small")
                      .list()
                      .getItems()
                      .stream()
                      .filter(p -> p.getMetadata().getDeletionTimestamp() == null)
                      .toList();
              assertThat(live).hasSize(8);
              for (Pod p : live) {
                assertThat(p.getSpec().getNodeName()).isNotNull();
                String claim =
                    p.getStatus().getResourceClaimStatuses().stream()
                        .filter(c -> c.getName().equals("kse-gpu-share"))
                        .findFirst()
                        .orElseThrow()
                        .getResourceClaimName();
                var results =
                    kube.resources(io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim.class)
                        .inNamespace(ns)
                        .withName(claim)
                        .get()
                        .getStatus()
                        .getAllocation()
                        .getDevices()
                        .getResults();
                assertThat(results.get(0).getShareID()).isNotBlank();
                gpus.add(p.getSpec().getNodeName() + "/" + results.get(0).getDevice());
              }
              assertThat(gpus)
                  .as("8 quarters of a GPU on 2 GPUs, as Slurm packed their shards")
                  .hasSize(2);
            });
    System.out.printf("[e2e] knative: 8 quarter-GPU replicas on %s%n", gpus);
    setMinScale(revision, 0);
    awaitServicePods("small", 0);
    await("no live placeholder once the replicas are gone")
        .atMost(Duration.ofSeconds(30))
        .until(() -> activePlaceholders(ns).isEmpty());
  }

  // ------------------------------------------------------------------------------ Knative objects

  NonNamespaceOperation<
          GenericKubernetesResource,
          GenericKubernetesResourceList,
          Resource<GenericKubernetesResource>>
      services() {
    return kube.genericKubernetesResources(SERVING, "Service").inNamespace(ns);
  }

  Resource<GenericKubernetesResource> pa(String revision) {
    return kube.genericKubernetesResources(
            "autoscaling.internal.knative.dev/v1alpha1", "PodAutoscaler")
        .inNamespace(ns)
        .withName(revision);
  }

  /**
   * A one-GPU model server of our scheduler, starting at {@code scale} pods (and kept at least
   * there), with the activator always in its path and the shortest stable window Knative allows.
   */
  GenericKubernetesResource service(String name, String image, int scale) {
    String yaml =
        """
        apiVersion: serving.knative.dev/v1
        kind: Service
        metadata: {name: %s, namespace: %s}
        spec:
          template:
            metadata:
              annotations:
                autoscaling.knative.dev/initial-scale: "%d"
                autoscaling.knative.dev/min-scale: "%d"
                autoscaling.knative.dev/target-burst-capacity: "-1"
                autoscaling.knative.dev/window: "6s"
                kse.io/topology: none
            spec:
              schedulerName: %s
              containers:
                - image: %s
                  resources: {limits: {nvidia.com/gpu: "1"}}
        """
            .formatted(name, ns, scale, scale, SCHEDULER, image);
    return Serialization.unmarshal(yaml, GenericKubernetesResource.class);
  }

  GenericKubernetesResource example(String file) throws Exception {
    GenericKubernetesResource r =
        Serialization.unmarshal(
            Files.readString(E2eStack.repo().resolve(file)), GenericKubernetesResource.class);
    r.getMetadata().setNamespace(ns);
    return r;
  }

  /** Creates a Service at zero pods; returns its first revision once it has a PodAutoscaler. */
  String createAtZero(String name) {
    services().resource(service(name, "dev.local/model-server:1", 0)).create();
    String revision = name + "-00001";
    await("the revision's PodAutoscaler")
        .atMost(Duration.ofSeconds(30))
        .until(() -> pa(revision).get() != null);
    return revision;
  }

  /** Sets the revision's lower scale bound on its PodAutoscaler; returns when it was asked. */
  Instant setMinScale(String revision, int pods) {
    Instant asked = Instant.now();
    pa(revision)
        .patch(
            PatchContext.of(PatchType.JSON_MERGE),
            "{\"metadata\":{\"annotations\":{\"" + MIN_SCALE + "\":\"" + pods + "\"}}}");
    return asked;
  }

  void setFeature(String key, String value) {
    kube.configMaps()
        .inNamespace("knative-serving")
        .withName("config-features")
        .patch(
            PatchContext.of(PatchType.JSON_MERGE),
            "{\"data\":{\"" + key + "\":\"" + value + "\"}}");
  }

  static boolean ready(GenericKubernetesResource r) {
    if (r == null || !(r.getAdditionalProperties().get("status") instanceof Map<?, ?> status)) {
      return false;
    }
    return status.get("conditions") instanceof List<?> conditions
        && conditions.stream()
            .anyMatch(
                c ->
                    c instanceof Map<?, ?> m
                        && "Ready".equals(m.get("type"))
                        && "True".equals(m.get("status")));
  }

  List<Pod> awaitServicePods(String service, int count) {
    return awaitPods("serving.knative.dev/service", service, count);
  }

  List<Pod> awaitRevisionPods(String revision, int count) {
    return awaitPods("serving.knative.dev/revision", revision, count);
  }

  /**
   * Waits until exactly {@code count} pods carry the label, all bound (none: all gone). A pod being
   * deleted is not counted among {@code count > 0}: Knative may take one back just after its bind.
   */
  List<Pod> awaitPods(String label, String value, int count) {
    List<Pod> seen = new ArrayList<>();
    await(count + " pods of " + value + (count > 0 ? " bound" : " (all gone)"))
        .atMost(Duration.ofSeconds(90))
        .pollInterval(Duration.ofMillis(100))
        .until(
            () -> {
              seen.clear();
              kube.pods().inNamespace(ns).withLabel(label, value).list().getItems().stream()
                  .filter(p -> count == 0 || p.getMetadata().getDeletionTimestamp() == null)
                  .forEach(seen::add);
              return seen.size() == count
                  && seen.stream().allMatch(p -> p.getSpec().getNodeName() != null);
            });
    return List.copyOf(seen);
  }

  /** Whether the pod is gone or being deleted now (read again, not from an earlier list). */
  boolean goneOrGoing(Pod pod) {
    Pod now = kube.pods().inNamespace(ns).withName(pod.getMetadata().getName()).get();
    return now == null
        || !now.getMetadata().getUid().equals(pod.getMetadata().getUid())
        || now.getMetadata().getDeletionTimestamp() != null;
  }

  // ------------------------------------------------------------------------------ observers

  /**
   * What happened to this namespace's pods (an informer: event times to the millisecond) and to
   * their placeholders (slurmrestd polled every 100 ms): when each pod appeared, was bound and was
   * gone; when each placeholder was last seen alive.
   */
  final class Lifecycles implements AutoCloseable {
    final Map<String, Instant> created = new java.util.concurrent.ConcurrentHashMap<>();
    final Map<String, Instant> bound = new java.util.concurrent.ConcurrentHashMap<>();
    final Map<String, Instant> gone = new java.util.concurrent.ConcurrentHashMap<>();
    final Map<String, Instant> lastAlive = new java.util.concurrent.ConcurrentHashMap<>();
    final List<String> tooLate = java.util.Collections.synchronizedList(new ArrayList<>());
    final Map<String, List<Long>> coldStartMs = new LinkedHashMap<>();
    final Map<String, List<Long>> knativeMs = new LinkedHashMap<>();
    volatile int maxBeyondPods;
    volatile int samples;
    final io.fabric8.kubernetes.client.informers.SharedIndexInformer<Pod> informer;
    final java.util.concurrent.ScheduledExecutorService poller =
        java.util.concurrent.Executors.newSingleThreadScheduledExecutor();

    Lifecycles() {
      informer =
          kube.pods()
              .inNamespace(ns)
              .inform(
                  new io.fabric8.kubernetes.client.informers.ResourceEventHandler<>() {
                    @Override
                    public void onAdd(Pod p) {
                      created.putIfAbsent(uid(p), Instant.now());
                      onUpdate(p, p);
                    }

                    @Override
                    public void onUpdate(Pod old, Pod p) {
                      if (p.getSpec().getNodeName() != null) {
                        bound.putIfAbsent(uid(p), Instant.now());
                      }
                    }

                    @Override
                    public void onDelete(Pod p, boolean finalStateUnknown) {
                      gone.putIfAbsent(uid(p), Instant.now());
                    }
                  });
      poller.scheduleWithFixedDelay(
          () -> keepGoing("placeholder poll", this::sample),
          0,
          100,
          java.util.concurrent.TimeUnit.MILLISECONDS);
    }

    private void sample() {
      List<String> alive =
          activePlaceholders(ns).stream()
              .map(j -> j.placeholder().map(PlaceholderTag::uid).orElse(""))
              .toList();
      Instant t = Instant.now(); // after the answer: the jobs were alive at or before t
      for (String uid : alive) {
        lastAlive.put(uid, t);
        Instant g = gone.get(uid);
        if (g != null && Duration.between(g, t).compareTo(RELEASE) > 0) {
          tooLate.add(uid + " alive " + Duration.between(g, t).toMillis() + " ms after its pod");
        }
      }
      long pods = created.keySet().stream().filter(u -> !gone.containsKey(u)).count();
      maxBeyondPods = Math.max(maxBeyondPods, (int) (alive.size() - pods));
      samples++;
    }

    void coldStarts(Instant scaleUp, List<Pod> pods, String what) {
      for (Pod p : pods) {
        String uid = uid(p);
        await().atMost(Duration.ofSeconds(5)).until(() -> bound.containsKey(uid));
        coldStartMs
            .computeIfAbsent(what, k -> new ArrayList<>())
            .add(Duration.between(scaleUp, bound.get(uid)).toMillis());
        knativeMs
            .computeIfAbsent(what, k -> new ArrayList<>())
            .add(Duration.between(scaleUp, created.get(uid)).toMillis());
      }
    }

    void printColdStarts() {
      coldStartMs.forEach(
          (what, ms) ->
              System.out.printf(
                  "[e2e] knative cold start (%s): scale-up -> bound p50 %d ms, max %d ms (n=%d); of"
                      + " which scale-up -> pod created (Knative) p50 %d ms%n",
                  what,
                  p50(ms),
                  ms.stream().mapToLong(x -> x).max().orElse(0),
                  ms.size(),
                  p50(knativeMs.get(what))));
    }

    /** Every pod seen gone had its placeholder end within {@link #RELEASE}; never more beyond. */
    void assertPlaceholdersFollowedThePods(int podsExpected) {
      poller.shutdown();
      sample();
      List<Long> lags =
          gone.entrySet().stream()
              .filter(e -> lastAlive.containsKey(e.getKey()))
              .map(
                  e ->
                      Math.max(
                          0, Duration.between(e.getValue(), lastAlive.get(e.getKey())).toMillis()))
              .sorted()
              .toList();
      System.out.printf(
          "[e2e] knative placeholders: %d pods came and went; a placeholder was last seen alive p50 %d"
              + " ms, max %d ms after its pod was gone (100 ms polls); at most %d more placeholders"
              + " than pods in %d samples%n",
          gone.size(),
          p50(lags),
          lags.isEmpty() ? 0 : lags.get(lags.size() - 1),
          Math.max(0, maxBeyondPods),
          samples);
      printColdStarts();
      assertThat(created).as("pods seen").hasSizeGreaterThanOrEqualTo(podsExpected);
      assertThat(lastAlive.keySet())
          .as("every placeholder belongs to a pod seen")
          .isSubsetOf(created.keySet());
      assertThat(tooLate).as("placeholders alive more than %s after their pod", RELEASE).isEmpty();
    }

    @Override
    public void close() {
      stop(poller);
      informer.close();
    }
  }

  /** Lets the running pass finish (an interrupt would fail its API call) and stops. */
  static void stop(java.util.concurrent.ExecutorService loop) {
    loop.shutdown();
    try {
      loop.awaitTermination(10, java.util.concurrent.TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** A periodic task that threw would never run again: report and go on. */
  static void keepGoing(String what, Runnable task) {
    try {
      task.run();
    } catch (RuntimeException e) {
      System.out.printf("[e2e] %s: %s%n", what, e);
    }
  }

  static long p50(List<Long> ms) {
    if (ms == null || ms.isEmpty()) {
      return 0;
    }
    List<Long> s = ms.stream().sorted().toList();
    return s.get((s.size() - 1) / 2);
  }

  static String uid(Pod p) {
    return p.getMetadata().getUid();
  }

  /**
   * Stands in for a networking layer (Kourier, Istio, Contour), as the DRA scenarios stand in for a
   * driver: marks each of the namespace's Knative Ingresses ready, with no data plane behind it, so
   * that Routes become Ready and Knative retires the revisions they no longer route to.
   */
  final class NetworkingLayer implements AutoCloseable {
    final java.util.concurrent.ScheduledExecutorService loop =
        java.util.concurrent.Executors.newSingleThreadScheduledExecutor();

    NetworkingLayer() {
      loop.scheduleWithFixedDelay(
          () -> keepGoing("networking layer", this::programAll),
          0,
          200,
          java.util.concurrent.TimeUnit.MILLISECONDS);
    }

    private void programAll() {
      var ingresses =
          kube.genericKubernetesResources("networking.internal.knative.dev/v1alpha1", "Ingress")
              .inNamespace(ns);
      for (GenericKubernetesResource in : ingresses.list().getItems()) {
        long generation = in.getMetadata().getGeneration();
        Object observed =
            in.getAdditionalProperties().get("status") instanceof Map<?, ?> s
                ? s.get("observedGeneration")
                : null;
        if (observed instanceof Number n && n.longValue() == generation && ready(in)) {
          continue;
        }
        String now = Instant.now().truncatedTo(java.time.temporal.ChronoUnit.SECONDS).toString();
        String lb = "{\"ingress\":[{\"domainInternal\":\"no-data-plane.kse-e2e.invalid\"}]}";
        StringBuilder conditions = new StringBuilder();
        for (String type : List.of("LoadBalancerReady", "NetworkConfigured", "Ready")) {
          conditions
              .append(conditions.length() == 0 ? "" : ",")
              .append(
                  "{\"type\":\"%s\",\"status\":\"True\",\"lastTransitionTime\":\"%s\"}"
                      .formatted(type, now));
        }
        ingresses
            .withName(in.getMetadata().getName())
            .subresource("status")
            .patch(
                PatchContext.of(PatchType.JSON_MERGE),
                "{\"status\":{\"observedGeneration\":%d,\"conditions\":[%s],\"publicLoadBalancer\":%s,\"privateLoadBalancer\":%s}}"
                    .formatted(generation, conditions, lb, lb));
      }
    }

    @Override
    public void close() {
      stop(loop);
    }
  }
}
