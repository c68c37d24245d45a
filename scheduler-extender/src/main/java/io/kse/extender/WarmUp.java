package io.kse.extender;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.WatchEvent;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.kse.extender.k8s.WellKnown;
import io.kse.extender.wire.BindRequest;
import io.kse.extender.wire.FilterRequest;
import io.kse.extender.wire.FilterResponse;
import io.kse.policy.PlacementPolicy;
import io.kse.policy.PodManifest;
import io.kse.policy.PreemptionLedger;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A new extender's first burst ran its hottest paths interpreted: 39 CPU-ms per pod for the first
 * 200 pods against 12.5 once warm (issue 47). Before it says ready it runs them here, in memory, on
 * a made-up pod: the Kubernetes client decoding a pod watch event (every informer event), a filter
 * call's body and its answer, a bind call's body, and the policy's decision for the pod; then the
 * HTTP stacks, by calling itself over loopback ({@link #overLoopback}). No API or Slurm call,
 * nothing kept.
 */
final class WarmUp {
  /** What a warm-up cost. */
  record Cost(int rounds, Duration wall, Duration cpu) {}

  private static final Logger LOG = LoggerFactory.getLogger(WarmUp.class);
  private static final ObjectMapper TREE = new ObjectMapper();

  private WarmUp() {}

  /**
   * Runs {@code rounds} rounds with the policy in force, and logs what it cost; never throws: a
   * cold start is slower, never a failed one.
   */
  static void beforeReady(
      KubernetesSerialization json,
      int rounds,
      Supplier<PlacementPolicy> policy,
      Optional<URI> verbs,
      URI ops) {
    try {
      Cost c =
          run(
              json,
              rounds,
              pod ->
                  policy
                      .get()
                      .decide(
                          PodManifest.facts(TREE.valueToTree(pod)),
                          new PreemptionLedger(),
                          Instant.EPOCH));
      // a round trip costs some ten in-memory rounds (1,000 took 2.8 s on 2 busy cores), and C1,
      // as deployed, compiles a method after some hundreds to 2,000 calls: a tenth as many
      Cost loop = overLoopback(verbs, ops, filterBody(json, 32), rounds / 10);
      LOG.info(
          "warmed_up rounds={} wallMs={} cpuMs={} loopbackRounds={} loopbackWallMs={}"
              + " loopbackCpuMs={} verbsOverLoopback={}",
          c.rounds(),
          c.wall().toMillis(),
          c.cpu().toMillis(),
          loop.rounds(),
          loop.wall().toMillis(),
          loop.cpu().toMillis(),
          verbs.isPresent());
    } catch (RuntimeException e) {
      LOG.warn("warm_up_failed error={}", e.toString());
    }
  }

  /**
   * The I/O stacks the in-memory rounds cannot reach — the HTTP server under the verbs (Netty,
   * Vert.x, the body limit, the verb pool's hand-off) and the JDK HTTP client Slurm's calls use —
   * run by sending this extender's own filter body to its verbs port and reading its ops {@code
   * /healthz}, over loopback, before it is synced: the filter is answered "not synced" (outcome
   * {@code not_synced}), so nothing is decided, logged per call or called out.
   *
   * @param verbs the verbs listener, or empty when it speaks TLS (this client would not trust it)
   */
  static Cost overLoopback(Optional<URI> verbs, URI ops, byte[] filterBody, int rounds) {
    long wall0 = System.nanoTime();
    long cpu0 = cpuNanos();
    HttpClient client =
        HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(2))
            .build();
    HttpRequest health =
        HttpRequest.newBuilder(ops.resolve("/healthz")).timeout(Duration.ofSeconds(2)).build();
    Optional<HttpRequest> filter =
        verbs.map(
            v ->
                HttpRequest.newBuilder(v.resolve("/filter"))
                    .timeout(Duration.ofSeconds(2))
                    .header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofByteArray(filterBody))
                    .build());
    var body = HttpResponse.BodyHandlers.ofByteArray();
    try {
      for (int i = 0; i < rounds; i++) {
        client.send(health, body);
        if (filter.isPresent()) {
          client.send(filter.get(), body);
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return new Cost(
        rounds, Duration.ofNanos(System.nanoTime() - wall0), Duration.ofNanos(cpuNanos() - cpu0));
  }

  /**
   * @param decide the policy's decision for a pod (read from its manifest, with no preemption
   *     charged yet)
   */
  static Cost run(KubernetesSerialization json, int rounds, Consumer<Pod> decide) {
    long wall0 = System.nanoTime();
    long cpu0 = cpuNanos();
    String event = "{\"type\":\"MODIFIED\",\"object\":" + json.asJson(pod()) + "}";
    byte[] filter = filterBody(json, 32);
    byte[] bind =
        ("{\"PodName\":\"llm-0\",\"PodNamespace\":\"serving\",\"PodUID\":\"uid-0\","
                + "\"Node\":\"gpu-node-0\"}")
            .getBytes(StandardCharsets.UTF_8);
    for (int i = 0; i < rounds; i++) {
      WatchEvent e = json.unmarshal(event, WatchEvent.class);
      FilterRequest req = FilterRequest.parse(filter, 5_000);
      FilterResponse.write(req, List.of("gpu-node-0"), "kse: not Slurm's node", false);
      BindRequest.parse(bind);
      try {
        decide.accept(e.getObject() instanceof Pod p ? p : pod());
      } catch (RuntimeException refused) {
        // a policy may refuse the made-up pod: the paths ran all the same
      }
    }
    return new Cost(
        rounds, Duration.ofNanos(System.nanoTime() - wall0), Duration.ofNanos(cpuNanos() - cpu0));
  }

  /** A pod as ours look once woken: gated, annotated, asking GPUs, tolerating our taint. */
  static Pod pod() {
    return new PodBuilder()
        .withNewMetadata()
        .withName("llm-0")
        .withNamespace("serving")
        .withUid("uid-0")
        .withResourceVersion("1")
        .withLabels(Map.of("app", "model-server", "pod-template-hash", "5d8f7c9b6"))
        .withAnnotations(Map.of(WellKnown.JOB_ANNOTATION, "1"))
        .withCreationTimestamp("2026-01-01T00:00:00Z")
        .endMetadata()
        .withNewSpec()
        .withSchedulerName("kse-scheduler")
        .addNewSchedulingGate()
        .withName(WellKnown.SCHEDULING_GATE)
        .endSchedulingGate()
        .addNewContainer()
        .withName("server")
        .withImage("registry.example/model-server:1")
        .withNewResources()
        .withLimits(Map.of("nvidia.com/gpu", new Quantity("8")))
        .withRequests(Map.of("cpu", new Quantity("4"), "memory", new Quantity("16Gi")))
        .endResources()
        .endContainer()
        .addNewToleration()
        .withKey(WellKnown.TAINT_KEY)
        .withOperator("Exists")
        .withEffect("NoSchedule")
        .endToleration()
        .endSpec()
        .withNewStatus()
        .withPhase("Pending")
        .addNewCondition()
        .withType("PodScheduled")
        .withStatus("False")
        .withReason("SchedulingGated")
        .endCondition()
        .endStatus()
        .build();
  }

  /** kube-scheduler's ExtenderArgs for {@link #pod} over {@code nodes} node names. */
  static byte[] filterBody(KubernetesSerialization json, int nodes) {
    List<String> names = new ArrayList<>();
    for (int i = 0; i < nodes; i++) {
      names.add("\"gpu-node-" + i + "\"");
    }
    return ("{\"Pod\":" + json.asJson(pod()) + ",\"NodeNames\":[" + String.join(",", names) + "]}")
        .getBytes(StandardCharsets.UTF_8);
  }

  /**
   * This replica's own plain-HTTP listener on {@code host}, as a client on this machine reaches it.
   */
  static URI self(String host, int port) {
    boolean any = host == null || host.isBlank() || host.equals("0.0.0.0") || host.equals("::");
    String h = any ? "127.0.0.1" : host.contains(":") ? "[" + host + "]" : host;
    return URI.create("http://" + h + ":" + port);
  }

  private static long cpuNanos() {
    return ManagementFactory.getThreadMXBean().getCurrentThreadCpuTime();
  }
}
