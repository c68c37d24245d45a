package io.kse.extender.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.kse.extender.ExtenderConfig;
import io.kse.extender.ExtenderService;
import io.kse.extender.Main;
import io.kse.slurm.JobState;
import io.kse.slurm.SlurmClient;
import io.kse.slurm.SlurmClients;
import io.kse.slurm.SlurmJob;
import io.kse.slurm.testing.LocalSlurmCluster;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The whole service in-process, against the real local Slurm and fabric8's mock API server: a pod
 * appears, its placeholder runs in Slurm, filter lets it through only on the allocated node, bind
 * posts the Binding, and deleting the pod cancels the job.
 */
@EnableKubernetesMockClient(crud = true)
class ExtenderLifecycleIT {
  static final String CLUSTER = "it-cluster";

  static KubernetesClient client;
  static KubernetesMockServer server;
  static LocalSlurmCluster cluster;
  static SlurmClient slurm;
  static ExtenderService service;
  static final ObjectMapper JSON = new ObjectMapper();
  static final HttpClient http =
      HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  @BeforeAll
  static void start() throws Exception {
    cluster = LocalSlurmCluster.shared(LocalSlurmCluster.Mode.PARTITION);
    cluster.cancelAll();
    slurm = SlurmClients.connect(cluster.config(), new SimpleMeterRegistry());
    Path policy = Path.of("../testing/slurm/policy-partition.yaml").toAbsolutePath();
    ExtenderConfig cfg =
        ExtenderConfig.fromEnv(
            kv(
                "KSE_HTTP_HOST",
                "127.0.0.1",
                "KSE_HTTP_PORT",
                "18888",
                "KSE_OPS_PORT",
                "18887",
                "KSE_POLICY_FILE",
                policy.toString(),
                "KSE_PLACEHOLDER_WORKDIR",
                cluster.jobDir().toString(),
                "KSE_SLURM_URL",
                cluster.restUrl().toString(),
                "KSE_SLURM_USER",
                cluster.env("KSE_LAB_JWT_USER"),
                "KSE_SLURM_JWT_FILE",
                cluster.env("KSE_LAB_JWT_FILE"),
                "KSE_SLURM_POLL_INTERVAL_MS",
                "200",
                // a drain must show within the tests' waits (production: every 30 s)
                "KSE_SLURM_NODE_INTERVAL_MS",
                "1000",
                // the mock API server does not implement the spec.schedulerName field selector
                "KSE_POD_FIELD_SELECTOR",
                "false",
                // slurmrestd 22.05 cannot drain nodes
                "KSE_DRAIN_VIA",
                "scontrol",
                "KSE_SCONTROL_CONF",
                cluster.env("SLURM_CONF"),
                // configured: the mock API server has no kube-system to derive it from
                "KSE_CLUSTER_ID",
                CLUSTER));
    service = Main.start(cfg, client, Clock.systemUTC());
    await().atMost(Duration.ofSeconds(30)).until(() -> get("/readyz").statusCode() == 200);
    // Slurm's hooks tell this extender of every job's end (the victim of a preemption among them),
    // as a site installs them (docs/install.md)
    hookRegistration =
        java.nio.file.Path.of(
            cluster.env("KSE_LAB_DIR"), "etc", "kse-allocation-hint.d", "lifecycle-it");
    java.nio.file.Files.writeString(hookRegistration, "127.0.0.1 " + service.opsPort() + "\n");
  }

  static java.nio.file.Path hookRegistration;

  static Map<String, String> kv(String... keyValues) {
    Map<String, String> m = new java.util.HashMap<>();
    for (int i = 0; i < keyValues.length; i += 2) {
      m.put(keyValues[i], keyValues[i + 1]);
    }
    return m;
  }

  @AfterAll
  static void stop() throws java.io.IOException {
    if (hookRegistration != null) {
      java.nio.file.Files.deleteIfExists(hookRegistration);
    }
    if (service != null) {
      service.close();
    }
    cluster.cancelAll();
  }

  /** Health, readiness, metrics and explain: the ops listener. */
  static HttpResponse<String> get(String path) throws Exception {
    return http.send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + service.opsPort() + path)).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  static HttpResponse<String> post(String path, String body) throws Exception {
    return http.send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + service.port() + path))
            .POST(HttpRequest.BodyPublishers.ofString(body))
            .header("Content-Type", "application/json")
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  static Pod pod(String name) {
    return io.kse.extender.testing.Pods.pending(name, 4, 4);
  }

  @Test
  void aPodGetsAPlaceholderIsFilteredToItsNodeBoundAndReleased() throws Exception {
    Pod created = client.pods().inNamespace("serving").resource(pod("llm-0")).create();
    String uid = created.getMetadata().getUid();

    // the informer saw the pod; the placeholder runs in the real Slurm
    SlurmJob job =
        await()
            .atMost(Duration.ofSeconds(20))
            .until(() -> placeholder(uid), Optional::isPresent)
            .get();
    SlurmJob running =
        await()
            .atMost(Duration.ofSeconds(20))
            .until(() -> slurm.job(job.id()).orElseThrow(), SlurmJob::isAllocated);
    String node = running.nodes().get(0);
    assertThat(running.partition()).isEqualTo("inference");
    assertThat(running.tresPerNode()).isEqualTo("gres:gpu:h100:4");

    // woken: the pod is nominated to the node (the mock API server keeps only the status part of a
    // pods/status write; the job and node annotations it also carries are checked against the real
    // API server by PlacementE2E and GroupsE2E)
    await()
        .atMost(Duration.ofSeconds(10))
        .until(
            () ->
                node.equals(
                    client
                        .pods()
                        .inNamespace("serving")
                        .withName("llm-0")
                        .get()
                        .getStatus()
                        .getNominatedNodeName()));

    String args =
        "{\"Pod\":"
            + JSON.writeValueAsString(created)
            + ",\"Nodes\":null,\"NodeNames\":"
            + JSON.writeValueAsString(
                List.of(
                    "gpu-node-0",
                    "gpu-node-1",
                    "gpu-node-2",
                    "gpu-node-3",
                    "gpu-node-4",
                    "gpu-node-5",
                    "gpu-node-6",
                    "gpu-node-7"))
            + "}";
    JsonNode f =
        await()
            .atMost(Duration.ofSeconds(10))
            .until(
                () -> JSON.readTree(post("/filter", args).body()),
                r -> r.path("NodeNames").size() == 1);
    assertThat(f.get("NodeNames").get(0).asText()).isEqualTo(node);
    assertThat(f.get("FailedAndUnresolvableNodes").size()).isEqualTo(7);

    String bind =
        "{\"PodName\":\"llm-0\",\"PodNamespace\":\"serving\",\"PodUID\":\""
            + uid
            + "\",\"Node\":\""
            + node
            + "\"}";
    assertThat(JSON.readTree(post("/bind", bind).body()).get("Error").asText()).isEmpty();
    assertThat(server.getRequestCount()).isPositive();

    JsonNode explain = JSON.readTree(get("/explain/serving/llm-0").body());
    assertThat(explain.get("tier").asText()).isEqualTo("inference");
    assertThat(explain.path("slurmJob").path("id").asLong()).isEqualTo(job.id());
    assertThat(get("/metrics").body())
        .contains("kse_filter_duration_seconds")
        .contains("kse_slurm_request_duration_seconds");

    client.pods().inNamespace("serving").withName("llm-0").delete();
    await()
        .atMost(Duration.ofSeconds(15))
        .until(() -> slurm.job(job.id()).map(SlurmJob::state).orElse(null) == JobState.CANCELLED);
  }

  @Test
  void aPodThatNeedsAPreemptionIsToldWhichTrainingJobGaveWay() throws Exception {
    cluster.cancelAll();
    cluster.submitTrainingOnEveryNode();
    // every node busy, and the same 8 jobs still running a while later: a job can die at launch on
    // a node the previous test just freed (seen once in CI: the pod then got that node without a
    // preemption), and that shows within a few seconds
    java.util.function.Supplier<java.util.Set<Long>> runningTraining =
        () ->
            slurm.jobsChangedSince(java.time.Instant.EPOCH).jobs().stream()
                .filter(j -> j.isAllocated() && j.name().startsWith("train-"))
                .map(SlurmJob::id)
                .collect(java.util.stream.Collectors.toSet());
    await()
        .atMost(Duration.ofSeconds(30))
        .pollInterval(Duration.ofMillis(500))
        .until(() -> runningTraining.get().size() == 8);
    java.util.Set<Long> first = runningTraining.get();
    Thread.sleep(5000);
    assertThat(runningTraining.get()).as("the same training jobs still running").isEqualTo(first);
    Pod p = pod("big-0");
    p.getSpec()
        .getContainers()
        .get(0)
        .getResources()
        .getRequests()
        .put("nvidia.com/gpu", new Quantity("8"));
    Pod created = client.pods().inNamespace("serving").resource(p).create();
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () ->
                assertThat(client.v1().events().inNamespace("serving").list().getItems())
                    .anySatisfy(
                        e -> {
                          assertThat(e.getInvolvedObject().getUid())
                              .isEqualTo(created.getMetadata().getUid());
                          assertThat(e.getReason()).isEqualTo("PreemptedSlurmJob");
                          assertThat(e.getMessage())
                              .contains("(train-")
                              .contains("partition training, tier training, 8 GPUs)");
                        }));
    assertThat(
            slurm.jobsChangedSince(java.time.Instant.EPOCH).jobs().stream()
                .filter(j -> first.contains(j.id()) && j.restartCount() == 1)
                .count())
        .as("Slurm requeued exactly one of this test's training jobs (earlier tests' may linger)")
        .isEqualTo(1);
    assertThat(get("/metrics").body())
        .contains(
            "kse_preemptions_total{attribution=\"exact\",tier=\"inference\",victim_tier=\"training\"}"
                + " 1.0")
        .contains("kse_pod_allocation_seconds_count");
    client.pods().inNamespace("serving").withName("big-0").delete();
    cluster.cancelAll();
  }

  @Test
  void cordonsDrainSlurmNodesAndSlurmDrainsTaintKubernetesNodes() {
    for (int i = 0; i < 8; i++) {
      client
          .nodes()
          .resource(
              new io.fabric8.kubernetes.api.model.NodeBuilder()
                  .withNewMetadata()
                  .withName("gpu-node-" + i)
                  .endMetadata()
                  .withNewSpec()
                  .endSpec()
                  .build())
          .createOr(n -> n.update());
    }
    client
        .nodes()
        .withName("gpu-node-3")
        .edit(
            n -> {
              n.getSpec().setUnschedulable(true);
              return n;
            });
    await().atMost(Duration.ofSeconds(20)).until(() -> slurmNode("gpu-node-3").isDraining());
    assertThat(slurmNode("gpu-node-3").reason()).isEqualTo("kse: cordoned in Kubernetes");
    client
        .nodes()
        .withName("gpu-node-3")
        .edit(
            n -> {
              n.getSpec().setUnschedulable(false);
              return n;
            });
    await().atMost(Duration.ofSeconds(20)).until(() -> !slurmNode("gpu-node-3").isDraining());

    cluster.cli("scontrol", "update", "nodename=gpu-node-5", "state=drain", "reason=maintenance");
    await()
        .atMost(Duration.ofSeconds(20))
        .until(() -> taints("gpu-node-5").contains("kse.io/slurm-unavailable"));
    cluster.cli("scontrol", "update", "nodename=gpu-node-5", "state=resume");
    await()
        .atMost(Duration.ofSeconds(20))
        .until(() -> !taints("gpu-node-5").contains("kse.io/slurm-unavailable"));
  }

  static io.kse.slurm.SlurmNode slurmNode(String name) {
    return slurm.nodes().stream().filter(n -> n.name().equals(name)).findFirst().orElseThrow();
  }

  static List<String> taints(String node) {
    var spec = client.nodes().withName(node).get().getSpec();
    return spec.getTaints() == null
        ? List.of()
        : spec.getTaints().stream().map(t -> t.getKey()).toList();
  }

  @Test
  void aRejectedPodIsExplainedAndNeverSubmitted() throws Exception {
    Pod p = pod("bad-0");
    p.getMetadata().setAnnotations(Map.of("kse.io/topology", "ring"));
    Pod created = client.pods().inNamespace("serving").resource(p).create();
    String args =
        "{\"Pod\":"
            + JSON.writeValueAsString(created)
            + ",\"Nodes\":null,\"NodeNames\":[\"gpu-node-0\"]}";
    JsonNode f =
        await()
            .atMost(Duration.ofSeconds(10))
            .until(
                () -> JSON.readTree(post("/filter", args).body()),
                r ->
                    r.path("FailedAndUnresolvableNodes")
                        .path("gpu-node-0")
                        .asText()
                        .contains("placement policy"));
    assertThat(f.path("FailedAndUnresolvableNodes").path("gpu-node-0").asText())
        .contains("kse.io/topology=ring is not a topology");
    assertThat(placeholder(created.getMetadata().getUid())).isEmpty();
    assertThat(client.v1().events().inNamespace("serving").list().getItems())
        .anySatisfy(e -> assertThat(e.getReason()).isEqualTo("PlacementRejected"));
  }

  /**
   * The pod's live placeholder. The mock API server hands out the same UIDs in every run, and
   * slurmctld lists ended jobs for minutes: an earlier run's cancelled placeholder for this UID
   * must not be taken for this run's (seen when two runs followed each other closely).
   */
  static Optional<SlurmJob> placeholder(String uid) {
    return slurm.jobsChangedSince(java.time.Instant.EPOCH).jobs().stream()
        .filter(j -> j.placeholder().map(t -> t.uid().equals(uid)).orElse(false))
        .filter(j -> !j.state().isFinal())
        .max(java.util.Comparator.comparingLong(SlurmJob::id));
  }
}
