package io.kse.extender.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.Pod;
import io.kse.extender.bind.BindService;
import io.kse.extender.filter.FilterService;
import io.kse.extender.k8s.CallerCheck;
import io.kse.extender.k8s.NodeNames;
import io.kse.extender.k8s.PodActions;
import io.kse.extender.k8s.PodBinder;
import io.kse.extender.k8s.PodSource;
import io.kse.extender.lifecycle.PlaceholderRegistry;
import io.kse.extender.metrics.ExtenderMetrics;
import io.kse.extender.testing.FakeSlurm;
import io.kse.extender.testing.Pods;
import io.kse.slurm.JobSubmission;
import io.kse.slurm.PlaceholderTag;
import io.kse.slurm.cache.SlurmStateCache;
import io.kse.slurm.testing.FakeSlurmClient;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The routes over real HTTP (Vert.x on a free loopback port, JDK client). */
class ExtenderServerTest {
  static final ObjectMapper JSON = new ObjectMapper();
  static final String UID = "6f1c2d3e-0000-4000-8000-000000000001";
  static final Pod pod =
      Pods.pending("llm-0", 4, 8, java.util.Map.of())
          .editMetadata()
          .withUid(UID)
          .endMetadata()
          .build();
  static Vertx vertx;
  static HttpServer server;
  static HttpServer ops;
  static ExtenderServer server0;
  static final FakeSlurm fake = new FakeSlurm();
  static final FakeSlurmClient slurm = fake.client;
  static final SlurmStateCache cache = fake.cache;
  static final List<String> binds = new ArrayList<>();
  static final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  static PodBinder.Result bindResult = PodBinder.Result.BOUND;
  static volatile boolean bindCrashes;
  static final HttpClient http =
      HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  @BeforeAll
  static void start() throws Exception {
    PlaceholderRegistry reg = new PlaceholderRegistry();
    NodeNames names = new NodeNames();
    PodActions noActions = PodActions.none();
    PodBinder binder =
        (pod, node) -> {
          if (bindCrashes) {
            throw new IllegalStateException("binder boom");
          }
          binds.add(pod + "@" + node);
          return new PodBinder.Outcome(bindResult, bindResult.name());
        };
    PodSource pods =
        new PodSource() {
          @Override
          public Optional<Pod> pod(String namespace, String name) {
            return namespace.equals("serving") && name.equals("llm-0")
                ? Optional.of(pod)
                : Optional.empty();
          }

          @Override
          public List<Pod> pods() {
            return List.of(pod);
          }
        };
    ExtenderServer s =
        server0 =
            new ExtenderServer(
                new FilterService(
                    cache,
                    reg,
                    names,
                    p -> {
                      if (p.name().equals("crash")) {
                        throw new IllegalStateException("boom");
                      }
                    },
                    io.kse.extender.lifecycle.Placement::of,
                    cache::allocationHinted),
                new BindService(
                    cache,
                    pods,
                    names,
                    binder,
                    noActions,
                    p -> {},
                    io.kse.extender.lifecycle.Placement::of,
                    io.kse.extender.dra.GpuClaims.none()),
                new ExtenderMetrics(registry),
                cache::synced,
                SYNCED::get,
                () -> "# metrics\nkse_up 1\n",
                p ->
                    p.name().equals("llm-0")
                        ? Optional.of(JSON.createObjectNode().put("tier", "inference"))
                        : Optional.empty(),
                (token, namespace) ->
                    token.equals("good")
                        ? CallerCheck.Verdict.ALLOWED
                        : token.equals("other")
                            ? CallerCheck.Verdict.FORBIDDEN
                            : CallerCheck.Verdict.UNAUTHENTICATED,
                HttpLimits.forTests(64 * 1024),
                () -> 100_000,
                Clock.systemUTC());
    s.allocationHints(hintsWithToken);
    vertx = Vertx.vertx();
    server =
        s.listen(vertx, "127.0.0.1", 0)
            .toCompletionStage()
            .toCompletableFuture()
            .get(10, TimeUnit.SECONDS);
    ops =
        s.listenOps(vertx, "127.0.0.1", 0)
            .toCompletionStage()
            .toCompletableFuture()
            .get(10, TimeUnit.SECONDS);
  }

  @AfterAll
  static void stop() throws Exception {
    vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  /** Whether the filter path counts as synced (informers and Slurm cache). */
  static final java.util.concurrent.atomic.AtomicBoolean SYNCED =
      new java.util.concurrent.atomic.AtomicBoolean(true);

  @BeforeEach
  void reset() {
    SYNCED.set(true);
    binds.clear();
    bindResult = PodBinder.Result.BOUND;
    bindCrashes = false;
  }

  static HttpResponse<String> call(String method, String path, String body) throws Exception {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + portFor(path) + path));
    b.method(
        method,
        body == null
            ? HttpRequest.BodyPublishers.noBody()
            : HttpRequest.BodyPublishers.ofString(body));
    return http.send(
        b.header("Content-Type", "application/json").build(), HttpResponse.BodyHandlers.ofString());
  }

  /** The verbs on their listener, everything else on the ops listener. */
  static int portFor(String path) {
    return List.of("/filter", "/prioritize", "/preempt", "/bind").contains(path)
        ? server.actualPort()
        : ops.actualPort();
  }

  static String args(String... nodes) throws Exception {
    return "{\"Pod\":{\"metadata\":{\"name\":\"llm-0\",\"namespace\":\"serving\",\"uid\":\""
        + UID
        + "\"}},"
        + "\"Nodes\":null,\"NodeNames\":"
        + JSON.writeValueAsString(List.of(nodes))
        + "}";
  }

  static long allocated(String node) {
    long id =
        slurm.submit(JobSubmission.builder(new PlaceholderTag("serving", "llm-0", UID)).build());
    slurm.allocate(id, List.of(node));
    cache.pollOnce();
    return id;
  }

  @Test
  void filtersToTheAllocatedNodeAndScoresIt() throws Exception {
    allocated("gpu-node-1");
    JsonNode f = JSON.readTree(call("POST", "/filter", args("gpu-node-0", "gpu-node-1")).body());
    assertThat(f.get("NodeNames").toString()).isEqualTo("[\"gpu-node-1\"]");
    assertThat(f.get("FailedAndUnresolvableNodes").get("gpu-node-0").asText())
        .contains("Slurm allocated gpu-node-1");
    JsonNode p =
        JSON.readTree(call("POST", "/prioritize", args("gpu-node-0", "gpu-node-1")).body());
    assertThat(p.toString())
        .isEqualTo(
            "[{\"Host\":\"gpu-node-0\",\"Score\":0},{\"Host\":\"gpu-node-1\",\"Score\":10}]");
    assertThat(registry.get("kse.filter.duration").tag("outcome", "allocated").timer().count())
        .isPositive();
  }

  @Test
  void beforeSyncFilterAnswersARetryableErrorInsteadOfParkingThePod() throws Exception {
    // found by e2e: a restarted extender called "unschedulable" a pod it merely had not seen yet,
    // and kube-scheduler left that pod alone for minutes
    allocated("gpu-node-1");
    SYNCED.set(false);
    HttpResponse<String> r = call("POST", "/filter", args("gpu-node-0", "gpu-node-1"));
    assertThat(r.statusCode()).isEqualTo(200);
    JsonNode f = JSON.readTree(r.body());
    assertThat(f.get("Error").asText()).contains("not synced");
    assertThat(f.get("NodeNames").isNull()).isTrue();
    assertThat(call("POST", "/filter", "{\"NodeNames\":[]}").statusCode())
        .as("bad input is still a 400")
        .isEqualTo(400);
  }

  @Test
  void preemptionIsOnlyAllowedOnTheAllocatedNode() throws Exception {
    allocated("gpu-node-1");
    String body =
        "{\"Pod\":{\"metadata\":{\"name\":\"llm-0\",\"namespace\":\"serving\",\"uid\":\""
            + UID
            + "\"}},"
            + "\"NodeNameToVictims\":null,\"NodeNameToMetaVictims\":{"
            + "\"gpu-node-0\":{\"Pods\":[{\"UID\":\"a\"}],\"NumPDBViolations\":0},"
            + "\"gpu-node-1\":{\"Pods\":[{\"UID\":\"b\"},{\"UID\":\"c\"}],\"NumPDBViolations\":1}}}";
    JsonNode r = JSON.readTree(call("POST", "/preempt", body).body());
    assertThat(r.toString())
        .isEqualTo(
            "{\"NodeNameToMetaVictims\":{\"gpu-node-1\":{\"Pods\":[{\"UID\":\"b\"},{\"UID\":\"c\"}],\"NumPDBViolations\":1}}}");
  }

  @Test
  void bindsOnlyWhereSlurmAllocated() throws Exception {
    allocated("gpu-node-1");
    String ok =
        "{\"PodName\":\"llm-0\",\"PodNamespace\":\"serving\",\"PodUID\":\""
            + UID
            + "\",\"Node\":\"gpu-node-1\"}";
    assertThat(JSON.readTree(call("POST", "/bind", ok).body()).get("Error").asText()).isEmpty();
    assertThat(binds).containsExactly("serving/llm-0@gpu-node-1");
    String wrong = ok.replace("gpu-node-1", "gpu-node-0");
    assertThat(JSON.readTree(call("POST", "/bind", wrong).body()).get("Error").asText())
        .contains("refusing to bind serving/llm-0 to gpu-node-0");
    assertThat(binds).hasSize(1);
    bindResult = PodBinder.Result.POD_GONE;
    assertThat(JSON.readTree(call("POST", "/bind", ok).body()).get("Error").asText())
        .isEqualTo("kse: POD_GONE");
  }

  @Test
  void aForgedBindNeverReachesTheApiServerNorTouchesTheJob() throws Exception {
    // found by hardening: a made-up PodName with a running pod's real UID got "pod not found"
    // from the API server, and the extender then cancelled that pod's job
    long job = allocated("gpu-node-1");
    String forged =
        "{\"PodName\":\"made-up\",\"PodNamespace\":\"serving\",\"PodUID\":\""
            + UID
            + "\",\"Node\":\"gpu-node-1\"}";
    bindResult = PodBinder.Result.POD_GONE;
    String error = JSON.readTree(call("POST", "/bind", forged).body()).get("Error").asText();
    assertThat(error).contains("no pod of this scheduler named serving/made-up");
    assertThat(binds).as("never sent to the API server").isEmpty();
    assertThat(slurm.job(job).orElseThrow().state().isFinal())
        .as("the pod's job lives on")
        .isFalse();
    String otherUid = forged.replace("made-up", "llm-0").replace(UID, "00000000-forged");
    assertThat(JSON.readTree(call("POST", "/bind", otherUid).body()).get("Error").asText())
        .contains("is known");
    assertThat(binds).isEmpty();
  }

  @Test
  void aCrashInsideAVerbIsA500MeteredAsErrorNotABadRequest() throws Exception {
    // a crash in /bind became "kse: bind crashed" with no log line; one in /filter was metered
    // as bad_request
    HttpResponse<String> f =
        call(
            "POST",
            "/filter",
            "{\"Pod\":{\"metadata\":{\"name\":\"crash\",\"namespace\":\"serving\",\"uid\":\"u-c\"}},"
                + "\"NodeNames\":[\"gpu-node-0\"]}");
    assertThat(f.statusCode()).isEqualTo(500);
    assertThat(f.body()).contains("internal error; see the extender's log").doesNotContain("boom");
    assertThat(registry.get("kse.filter.duration").tag("outcome", "error").timer().count())
        .isEqualTo(1);
    allocated("gpu-node-1");
    bindCrashes = true;
    HttpResponse<String> b =
        call(
            "POST",
            "/bind",
            "{\"PodName\":\"llm-0\",\"PodNamespace\":\"serving\",\"PodUID\":\""
                + UID
                + "\",\"Node\":\"gpu-node-1\"}");
    assertThat(b.statusCode()).isEqualTo(500);
    assertThat(registry.get("kse.bind.duration").tag("outcome", "error").timer().count())
        .isEqualTo(1);
  }

  @Test
  void aFieldOfTheWrongTypeIsNamed() throws Exception {
    // a metadata.name given as an object was read as "neither NodeNames nor Nodes"
    String body =
        "{\"Pod\":{\"metadata\":{\"name\":{\"x\":1},\"namespace\":\"serving\",\"uid\":\"u\"}},"
            + "\"NodeNames\":[\"gpu-node-0\"]}";
    HttpResponse<String> r = call("POST", "/filter", body);
    assertThat(r.statusCode()).isEqualTo(400);
    assertThat(JSON.readTree(r.body()).get("message").asText())
        .isEqualTo("ExtenderArgs.Pod.metadata.name must be a string, found START_OBJECT");
    String bind = "{\"PodName\":[1],\"PodNamespace\":\"serving\",\"PodUID\":\"u\",\"Node\":\"n\"}";
    assertThat(JSON.readTree(call("POST", "/bind", bind).body()).get("message").asText())
        .isEqualTo("PodName must be a string, found array");
  }

  @Test
  void badInputGets400NamingTheProblem() throws Exception {
    HttpResponse<String> r = call("POST", "/filter", "{\"NodeNames\":[]}");
    assertThat(r.statusCode()).isEqualTo(400);
    assertThat(JSON.readTree(r.body()).get("message").asText())
        .isEqualTo("ExtenderArgs.Pod is missing");
    assertThat(call("POST", "/filter", "not json").statusCode()).isEqualTo(400);
    assertThat(call("POST", "/bind", "{\"PodName\":\"x\"}").body())
        .contains("needs PodName, PodUID and Node");
    String big =
        RawHttp.post(server.actualPort(), "/filter", "{\"x\":\"" + "a".repeat(70 * 1024) + "\"}");
    assertThat(big).startsWith("HTTP/1.1 413").contains("request body exceeds 65536 bytes");
    assertThat(registry.get("kse.bad.requests").tag("verb", "filter").counter().count())
        .isGreaterThanOrEqualTo(2);
    // and the service still answers
    assertThat(call("GET", "/healthz", null).statusCode()).isEqualTo(200);
  }

  @Test
  void healthReadinessMetricsExplainAndUnknownRoutes() throws Exception {
    cache.pollOnce();
    assertThat(call("GET", "/readyz", null).statusCode()).isEqualTo(200);
    assertThat(call("GET", "/metrics", null).body()).contains("kse_up 1");
    assertThat(call("GET", "/explain/serving/llm-0", null).body())
        .contains("\"tier\" : \"inference\"");
    assertThat(call("GET", "/explain/serving/nope", null).statusCode()).isEqualTo(404);
    HttpResponse<String> r = call("GET", "/nope", null);
    assertThat(r.statusCode()).isEqualTo(404);
    assertThat(r.body()).contains("no route GET /nope");
    assertThat(call("POST", "/filter-nope", "{}").statusCode()).isEqualTo(404);
    assertThat(
            http.send(
                    HttpRequest.newBuilder(
                            URI.create("http://127.0.0.1:" + server.actualPort() + "/metrics"))
                        .build(),
                    HttpResponse.BodyHandlers.ofString())
                .statusCode())
        .as("the verbs' listener serves the verbs only")
        .isEqualTo(404);
  }

  @Test
  void explainOffLoopbackNeedsATokenAllowedToReadThePods() throws Exception {
    // the records name pod UIDs, job ids and nodes: not for anyone who reaches the port
    server0.trustNoAddress();
    String url = "http://127.0.0.1:" + ops.actualPort() + "/explain/serving/llm-0";
    assertThat(get(url, null).statusCode()).isEqualTo(401);
    assertThat(get(url, "Bearer bad").statusCode()).isEqualTo(401);
    assertThat(get(url, "Bearer other").statusCode()).isEqualTo(403);
    HttpResponse<String> ok = get(url, "Bearer good");
    assertThat(ok.statusCode()).isEqualTo(200);
    assertThat(ok.body()).contains("\"tier\" : \"inference\"");
    server0.trustLoopbackForTests();
  }

  static final List<Long> hinted = new java.util.concurrent.CopyOnWriteArrayList<>();
  static final List<Long> ended = new java.util.concurrent.CopyOnWriteArrayList<>();
  static final List<List<String>> nodeEvents = new java.util.concurrent.CopyOnWriteArrayList<>();

  /** The hooks' events as the route hands them on, recorded. */
  static final io.kse.slurm.cache.SlurmHookEvents recorded =
      new io.kse.slurm.cache.SlurmHookEvents() {
        @Override
        public void allocated(long jobId) {
          hinted.add(jobId);
        }

        @Override
        public void ended(long jobId, List<String> nodes) {
          ended.add(jobId);
        }

        @Override
        public void nodesChanged(List<String> nodes) {
          nodeEvents.add(nodes);
        }
      };

  /** The pods the hold route sees, and whether the informer is synced. */
  static volatile List<io.fabric8.kubernetes.api.model.Pod> holdPods = List.of();

  static volatile boolean podsSynced = true;

  static final java.util.function.BiFunction<
          Long, String, Optional<io.kse.extender.lifecycle.GpuHold.Verdict>>
      holds =
          (job, node) ->
              podsSynced
                  ? Optional.of(io.kse.extender.lifecycle.GpuHold.of(job, node, node, holdPods))
                  : Optional.empty();

  static final AllocationHintRoute hintsWithToken =
      new AllocationHintRoute(
          recorded, holds, Optional.of("hint-token"), new ExtenderMetrics(registry));

  static HttpResponse<String> hint(String query, String authorization) throws Exception {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(
                URI.create(
                    "http://127.0.0.1:" + ops.actualPort() + "/hooks/slurm-allocation" + query))
            .POST(HttpRequest.BodyPublishers.noBody());
    if (authorization != null) {
      b.header("Authorization", authorization);
    }
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void anAllocationHintFromLoopbackIsTakenAndAMalformedOneNamed() throws Exception {
    hinted.clear();
    assertThat(hint("?job=42", null).statusCode()).isEqualTo(202);
    assertThat(hinted).containsExactly(42L);
    // EpilogSlurmctld's hint: the job ended
    ended.clear();
    assertThat(hint("?job=43&event=end", null).statusCode()).isEqualTo(202);
    assertThat(ended).containsExactly(43L);
    HttpResponse<String> badEvent = hint("?job=44&event=started", null);
    assertThat(badEvent.statusCode()).isEqualTo(400);
    assertThat(badEvent.body())
        .contains("event must be allocated, end or node")
        .contains("started");
    assertThat(hinted).containsExactly(42L);
    HttpResponse<String> bad = hint("?job=12ab", null);
    assertThat(bad.statusCode()).isEqualTo(400);
    assertThat(bad.body()).contains("job must be a Slurm job id").contains("12ab");
    assertThat(hint("", null).statusCode()).isEqualTo(400);
    for (String malformed : List.of("?job=%", "?job=%zz", "?job=4%2")) {
      assertThat(RawHttp.post(ops.actualPort(), "/hooks/slurm-allocation" + malformed, ""))
          .as(malformed)
          .startsWith("HTTP/1.1 400")
          .contains("not valid percent-encoding");
    }
    assertThat(hinted).containsExactly(42L);
  }

  @Test
  void aNodeTriggersHintNamesNodesAndNoJob() throws Exception {
    nodeEvents.clear();
    // strigger's argument is a Slurm host list: the hook passes it on percent-encoded
    assertThat(hint("?event=node&nodes=gpu-node-%5B1-3%2C7%5D", null).statusCode()).isEqualTo(202);
    assertThat(nodeEvents)
        .containsExactly(List.of("gpu-node-1", "gpu-node-2", "gpu-node-3", "gpu-node-7"));
    HttpResponse<String> noNodes = hint("?event=node", null);
    assertThat(noNodes.statusCode()).isEqualTo(400);
    assertThat(noNodes.body()).contains("a node event needs nodes");
    HttpResponse<String> withJob = hint("?event=node&job=5&nodes=gpu-node-1", null);
    assertThat(withJob.statusCode()).isEqualTo(400);
    assertThat(withJob.body()).contains("a node event names nodes, not a job").contains("'5'");
    assertThat(nodeEvents).hasSize(1);
  }

  /**
   * Vert.x reads query keys in any case: {@code ?JOB=1} was taken as a hint for job 1. A hook sends
   * exactly job, event and nodes, once each; and a job id Slurm cannot have is never read.
   */
  @Test
  void aHintsKeysAreExactAndItsJobIdOneSlurmCanHave() throws Exception {
    hinted.clear();
    for (String q : List.of("?JOB=1", "?Job=1", "?job=1&JOB=2", "?job=1&job=2", "?job=1&extra=x")) {
      HttpResponse<String> r = hint(q, null);
      assertThat(r.statusCode()).as(q).isEqualTo(400);
      assertThat(r.body()).as(q).contains("a hint takes job, event and nodes");
    }
    for (String id :
        List.of("0", "4294967294", "4294967295", "99999999999", "999999999999999999")) {
      HttpResponse<String> r = hint("?job=" + id, null);
      assertThat(r.statusCode()).as(id).isEqualTo(400);
      assertThat(r.body()).as(id).contains("job must be a Slurm job id (1 to 4294967293)");
    }
    assertThat(hinted).isEmpty();
    assertThat(hint("?job=4294967293", null).statusCode()).isEqualTo(202);
    assertThat(hinted).containsExactly(4294967293L);
  }

  static HttpResponse<String> holdAsk(String query, String authorization) throws Exception {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(
            URI.create("http://127.0.0.1:" + ops.actualPort() + "/hooks/slurm-hold" + query));
    if (authorization != null) {
      b.header("Authorization", authorization);
    }
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  /** Slurm's node Epilog asks whether a pod of the ended placeholder still runs on its node. */
  @Test
  void theNodeEpilogIsToldToHoldWhileThePlaceholdersPodRunsThere() throws Exception {
    io.fabric8.kubernetes.api.model.Pod pod =
        new io.fabric8.kubernetes.api.model.PodBuilder()
            .withNewMetadata()
            .withNamespace("serving")
            .withName("llm-0")
            .addToAnnotations(io.kse.extender.k8s.WellKnown.JOB_ANNOTATION, "41")
            .endMetadata()
            .withNewSpec()
            .withNodeName("gpu-node-1")
            .endSpec()
            .build();
    holdPods = List.of(pod);
    try {
      HttpResponse<String> held = holdAsk("?job=41&node=gpu-node-1", null);
      assertThat(held.statusCode()).isEqualTo(200);
      assertThat(held.body()).startsWith("hold 1 pod(s) of Slurm job 41").contains("serving/llm-0");
      assertThat(holdAsk("?job=41&node=gpu-node-2", null).body()).startsWith("release ");
      assertThat(holdAsk("?job=42&node=gpu-node-1", null).body()).startsWith("release ");
      holdPods = List.of();
      assertThat(holdAsk("?job=41&node=gpu-node-1", null).body())
          .isEqualTo("release no pod of Slurm job 41 runs on gpu-node-1\n");
      podsSynced = false;
      HttpResponse<String> unknown = holdAsk("?job=41&node=gpu-node-1", null);
      assertThat(unknown.statusCode()).isEqualTo(503);
      assertThat(unknown.body()).startsWith("unknown");
      podsSynced = true;
      for (String bad :
          List.of("?job=41", "?node=n", "?job=0&node=n", "?job=41&node=a%20b", "?JOB=41&node=n")) {
        assertThat(holdAsk(bad, null).statusCode()).as(bad).isEqualTo(400);
      }
      hintsWithToken.trust(a -> false);
      assertThat(holdAsk("?job=41&node=gpu-node-1", null).statusCode()).isEqualTo(401);
      assertThat(holdAsk("?job=41&node=gpu-node-1", "Bearer hint-token").statusCode())
          .isEqualTo(200);
    } finally {
      holdPods = List.of();
      podsSynced = true;
      hintsWithToken.trust(ExtenderServer::isLoopback);
    }
  }

  @Test
  void aCallerWhoseAddressIsUnknownIsNotLoopback() {
    // InetAddress reads "" as localhost: an unknown caller must not pass as the pod itself
    assertThat(ExtenderServer.isLoopback("")).isFalse();
    assertThat(ExtenderServer.isLoopback(null)).isFalse();
    assertThat(ExtenderServer.isLoopback("127.0.0.1")).isTrue();
    assertThat(ExtenderServer.isLoopback("192.0.2.1")).isFalse();
  }

  @Test
  void anAllocationHintFromElsewhereNeedsTheHintToken() throws Exception {
    hinted.clear();
    hintsWithToken.trust(a -> false);
    try {
      assertThat(hint("?job=7", null).statusCode()).isEqualTo(401);
      assertThat(hint("?job=7", "Bearer wrong").statusCode()).isEqualTo(401);
      assertThat(hint("?job=7", "Bearer hint-token").statusCode()).isEqualTo(202);
      assertThat(hinted).containsExactly(7L);
      // without a token configured, only loopback may hint
      AllocationHintRoute noToken =
          new AllocationHintRoute(recorded, holds, Optional.empty(), new ExtenderMetrics(registry));
      noToken.trust(a -> false);
      server0.allocationHints(noToken);
      HttpResponse<String> refused = hint("?job=8", "Bearer hint-token");
      assertThat(refused.statusCode()).isEqualTo(403);
      assertThat(refused.body()).contains("KSE_ALLOCATION_HINT_TOKEN_FILE");
      assertThat(hinted).containsExactly(7L);
    } finally {
      hintsWithToken.trust(ExtenderServer::isLoopback);
      server0.allocationHints(hintsWithToken);
    }
  }

  /**
   * Issue 44: a standby that gets a hint applies it and passes it on to the writer's advertised
   * address, with the token and a mark; a forwarded hint is never passed on again, and the writer
   * passes on nothing.
   */
  @Test
  void aStandbyPassesAHintOnToTheWriterOnceWithTheToken() throws Exception {
    List<io.vertx.core.http.HttpServerRequest> atWriter =
        new java.util.concurrent.CopyOnWriteArrayList<>();
    HttpServer writer =
        vertx
            .createHttpServer()
            .requestHandler(
                req -> {
                  atWriter.add(req);
                  req.response().setStatusCode(202).end();
                })
            .listen(0, "127.0.0.1")
            .toCompletionStage()
            .toCompletableFuture()
            .get(10, java.util.concurrent.TimeUnit.SECONDS);
    java.util.concurrent.atomic.AtomicBoolean isWriter =
        new java.util.concurrent.atomic.AtomicBoolean();
    AllocationHintRoute standby =
        new AllocationHintRoute(
            recorded,
            holds,
            Optional.of("hint-token"),
            new ExtenderMetrics(registry),
            isWriter::get,
            () -> Optional.of("127.0.0.1:" + writer.actualPort()));
    hinted.clear();
    server0.allocationHints(standby);
    try {
      assertThat(hint("?job=77&event=end&nodes=gpu-node-%5B1-2%5D", null).statusCode())
          .isEqualTo(202);
      await().atMost(java.time.Duration.ofSeconds(5)).until(() -> atWriter.size() == 1);
      var passed = atWriter.get(0);
      assertThat(passed.uri())
          .isEqualTo("/hooks/slurm-allocation?job=77&event=end&nodes=gpu-node-%5B1-2%5D");
      assertThat(passed.getHeader("Authorization")).isEqualTo("Bearer hint-token");
      assertThat(passed.getHeader(HintForwarder.FORWARDED_BY)).isNotNull();
      assertThat(ended).contains(77L);

      HttpRequest forwarded =
          HttpRequest.newBuilder(
                  URI.create(
                      "http://127.0.0.1:" + ops.actualPort() + "/hooks/slurm-allocation?job=78"))
              .header(HintForwarder.FORWARDED_BY, "standby")
              .POST(HttpRequest.BodyPublishers.noBody())
              .build();
      assertThat(http.send(forwarded, HttpResponse.BodyHandlers.ofString()).statusCode())
          .isEqualTo(202);
      isWriter.set(true);
      assertThat(hint("?job=79", null).statusCode()).isEqualTo(202);
      Thread.sleep(300); // nothing may arrive: a negative needs a window
      assertThat(atWriter)
          .as("neither a forwarded hint nor the writer's own is passed on")
          .hasSize(1);
      assertThat(hinted).containsExactly(78L, 79L);
      assertThat(registry.find("kse.allocation.hints").tag("result", "forwarded").counter())
          .isNotNull();
    } finally {
      server0.allocationHints(hintsWithToken);
      writer.close();
    }
  }

  /** Without a hint token the writer off loopback would refuse every hint: none is sent. */
  @Test
  void withoutAHintTokenNothingIsPassedOnToAWriterOffLoopback() throws Exception {
    SimpleMeterRegistry own = new SimpleMeterRegistry();
    AllocationHintRoute standby =
        new AllocationHintRoute(
            recorded,
            holds,
            Optional.empty(),
            new ExtenderMetrics(own),
            () -> false,
            () -> Optional.of("192.0.2.1:8889")); // TEST-NET: a send would fail after 1 s
    server0.allocationHints(standby);
    try {
      assertThat(hint("?job=81", null).statusCode()).isEqualTo(202);
      Thread.sleep(1_500); // nothing may be tried: a negative needs a window
      assertThat(own.find("kse.allocation.hints").tag("result", "forward_failed").counter())
          .isNull();
      assertThat(own.find("kse.allocation.hints").tag("result", "accepted").counter()).isNotNull();
    } finally {
      server0.allocationHints(hintsWithToken);
    }
  }

  static HttpResponse<String> get(String url, String authorization) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url));
    if (authorization != null) {
      b.header("Authorization", authorization);
    }
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }
}
