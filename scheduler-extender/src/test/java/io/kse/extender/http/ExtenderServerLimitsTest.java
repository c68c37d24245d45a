package io.kse.extender.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kse.extender.bind.BindService;
import io.kse.extender.filter.FilterService;
import io.kse.extender.k8s.NodeNames;
import io.kse.extender.k8s.PodActions;
import io.kse.extender.k8s.PodBinder;
import io.kse.extender.k8s.PodSource;
import io.kse.extender.lifecycle.PlaceholderRegistry;
import io.kse.extender.metrics.ExtenderMetrics;
import io.kse.extender.testing.FakeSlurm;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The service's edges under abuse (issue: 37 half-sent 14 MiB uploads killed the JVM; a 10^6-name
 * filter was computed on the event loop): real Vert.x server, real sockets, small limits.
 */
class ExtenderServerLimitsTest {
  static final int BODY = 256 * 1024;
  static final int BUDGET = 1024 * 1024;
  static final int MAX_CONNECTIONS = 24;
  static final int MAX_NAMES = 50;
  static final Duration HEAD_TIMEOUT = Duration.ofMillis(1500);

  Vertx vertx;
  ExtenderServer server;
  int port;
  int opsPort;
  final SimpleMeterRegistry meters = new SimpleMeterRegistry();
  final CountDownLatch release = new CountDownLatch(1);
  final CountDownLatch entered = new CountDownLatch(1);
  final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  @BeforeEach
  void start() throws Exception {
    FakeSlurm fake = new FakeSlurm();
    // a pod without a job asks for a placeholder: here that call blocks, to fill the verb pool
    FilterService filter =
        new FilterService(
            fake.cache,
            new PlaceholderRegistry(),
            new NodeNames(),
            p -> {
              if (p.name().equals("slow")) {
                entered.countDown();
                try {
                  release.await(20, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                }
              }
            },
            io.kse.extender.lifecycle.Placement::of,
            fake.cache::allocationHinted);
    PodBinder binder = (pod, node) -> new PodBinder.Outcome(PodBinder.Result.BOUND, "bound");
    HttpLimits limits =
        new HttpLimits(
            BODY,
            BUDGET,
            MAX_CONNECTIONS,
            Duration.ofMillis(1500),
            Duration.ofSeconds(60),
            HEAD_TIMEOUT,
            1,
            1,
            1,
            1);
    server =
        new ExtenderServer(
            filter,
            new BindService(
                fake.cache,
                PodSource.none(),
                new NodeNames(),
                binder,
                PodActions.none(),
                p -> {},
                io.kse.extender.lifecycle.Placement::of,
                io.kse.extender.dra.GpuClaims.none()),
            new ExtenderMetrics(meters),
            () -> true,
            () -> true,
            () -> "",
            p -> Optional.empty(),
            io.kse.extender.k8s.CallerCheck.nobody(),
            limits,
            () -> MAX_NAMES,
            Clock.systemUTC());
    vertx = Vertx.vertx();
    HttpServer s =
        server
            .listen(vertx, "127.0.0.1", 0)
            .toCompletionStage()
            .toCompletableFuture()
            .get(10, TimeUnit.SECONDS);
    port = s.actualPort();
    opsPort =
        server
            .listenOps(vertx, "127.0.0.1", 0)
            .toCompletionStage()
            .toCompletableFuture()
            .get(10, TimeUnit.SECONDS)
            .actualPort();
  }

  @AfterEach
  void stop() throws Exception {
    release.countDown();
    server.close();
    vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  static String filterArgs(String pod, int names) {
    String list =
        String.join(
            ",", IntStream.range(0, names).mapToObj(i -> "\"gpu-node-" + i + "\"").toList());
    return "{\"Pod\":{\"metadata\":{\"name\":\""
        + pod
        + "\",\"namespace\":\"serving\",\"uid\":\"uid-"
        + pod
        + "\"}},\"NodeNames\":["
        + list
        + "]}";
  }

  CompletableFuture<HttpResponse<String>> filterAsync(String pod) {
    return http.sendAsync(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/filter"))
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(filterArgs(pod, 3)))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void halfSentUploadsHoldAtMostTheBudgetAndAreCutOffByTheDeadline() throws Exception {
    List<RawHttp> uploads = new ArrayList<>();
    AtomicLong peak = new AtomicLong();
    Thread sampler =
        new Thread(
            () -> {
              while (!Thread.currentThread().isInterrupted()) {
                peak.accumulateAndGet(server.inFlightBytes(), Math::max);
              }
            });
    sampler.start();
    try {
      // the worst case: every connection declares the largest body and stops just short of it
      for (int i = 0; i < 20; i++) {
        uploads.add(new RawHttp(port).upload("/filter", "application/json", BODY, BODY - 100));
      }
      List<String> answers = new ArrayList<>();
      for (RawHttp u : uploads) {
        answers.add(u.answer(5_000));
      }
      assertThat(answers).allSatisfy(a -> assertThat(a).matches("(?s)HTTP/1.1 (503|408) .*"));
      assertThat(answers.stream().filter(a -> a.startsWith("HTTP/1.1 503")).count())
          .as("beyond the budget: refused at once")
          .isGreaterThanOrEqualTo(20 - BUDGET / (BODY - 100));
      assertThat(answers.stream().filter(a -> a.startsWith("HTTP/1.1 408")).count())
          .as("within the budget: cut off at the deadline")
          .isPositive();
    } finally {
      sampler.interrupt();
      sampler.join();
      for (RawHttp u : uploads) {
        u.close();
      }
    }
    assertThat(peak.get()).as("body bytes held at the peak").isLessThanOrEqualTo(BUDGET);
    await().atMost(5, TimeUnit.SECONDS).until(() -> server.inFlightBytes() == 0);
    assertThat(filterAsync("after").get(10, TimeUnit.SECONDS).statusCode())
        .as("and the service still answers")
        .isEqualTo(200);
  }

  @Test
  void aBodyOverTheLimitIsRefusedUnreadAndTheConnectionClosed() throws Exception {
    try (RawHttp c = new RawHttp(port).upload("/filter", "application/json", 15L << 20, 0)) {
      assertThat(c.answer(5_000)).startsWith("HTTP/1.1 413").contains("exceeds 262144 bytes");
      assertThat(c.closedByServer(5_000)).isTrue();
    }
  }

  @Test
  void formAndMultipartBodiesGet415() throws Exception {
    for (String type : List.of("application/x-www-form-urlencoded", "multipart/form-data; b=x")) {
      try (RawHttp c = new RawHttp(port).upload("/filter", type, 10, 10)) {
        assertThat(c.answer(5_000)).startsWith("HTTP/1.1 415").contains("application/json");
      }
    }
  }

  @Test
  void aRequestMayNameNoMoreNodesThanTheClusterHas() throws Exception {
    String answer = RawHttp.post(port, "/filter", filterArgs("big", MAX_NAMES + 1));
    assertThat(answer).startsWith("HTTP/1.1 400").contains("names more than 50 nodes");
    assertThat(RawHttp.post(port, "/filter", filterArgs("fits", MAX_NAMES)))
        .startsWith("HTTP/1.1 200");
  }

  @Test
  void aFullListenerClosesTheConnectionThatWaitedLongestToMakeRoom() throws Exception {
    List<RawHttp> idle = new ArrayList<>();
    try {
      for (int i = 0; i < MAX_CONNECTIONS; i++) {
        idle.add(new RawHttp(port));
        Thread.sleep(2); // so that the first is the oldest
      }
      try (RawHttp extra = new RawHttp(port)) {
        assertThat(idle.get(0).closedByServer(5_000)).as("the oldest idle one").isTrue();
        assertThat(extra.closedByServer(200)).as("the newcomer is kept").isFalse();
        assertThat(idle.get(1).closedByServer(200)).as("the others stay open").isFalse();
      }
    } finally {
      for (RawHttp c : idle) {
        c.close();
      }
    }
    assertThat(meters.get("kse.http.refused").tag("reason", "ConnectionEvicted").counter().count())
        .isEqualTo(1);
    await()
        .atMost(5, TimeUnit.SECONDS)
        .until(() -> filterAsync("later").get(10, TimeUnit.SECONDS).statusCode() == 200);
  }

  @Test
  void slowRequestHeadsOnTheOpsPortNeitherLockOutTheVerbsNorHealthChecks() throws Exception {
    // the ops port is open to the cluster (metrics): many callers trickling request heads there
    List<RawHttp> slow = new ArrayList<>();
    try {
      for (int i = 0; i < MAX_CONNECTIONS * 3; i++) {
        slow.add(new RawHttp(opsPort).send("GET /healthz HTTP/1.1\r\nHost: x\r\n"));
      }
      assertThat(filterAsync("verb").get(10, TimeUnit.SECONDS).statusCode())
          .as("the verbs have capacity of their own")
          .isEqualTo(200);
      assertThat(RawHttp.get(opsPort, "/healthz"))
          .as("a whole request still gets in on the ops port")
          .startsWith("HTTP/1.1 200");
      // the ones still open are closed once their head is overdue, not at the idle timeout
      long start = System.nanoTime();
      for (RawHttp c : slow) {
        c.send("X-Slow: 1\r\n");
      }
      for (RawHttp c : slow) {
        assertThat(c.closedByServer(10_000)).isTrue();
      }
      assertThat(Duration.ofNanos(System.nanoTime() - start))
          .isLessThan(HEAD_TIMEOUT.plusSeconds(5));
    } finally {
      for (RawHttp c : slow) {
        c.close();
      }
    }
    assertThat(meters.get("kse.http.refused").tag("reason", "HeadTimeout").counter().count())
        .isPositive();
  }

  @Test
  void aKeptAliveConnectionIsNotClosedByTheHeadDeadline() throws Exception {
    try (RawHttp c = new RawHttp(opsPort)) {
      assertThat(c.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n").answer(5_000))
          .startsWith("HTTP/1.1 200");
      Thread.sleep(HEAD_TIMEOUT.toMillis() + 1_500);
      assertThat(c.closedByServer(100)).isFalse();
      assertThat(c.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n").answer(5_000))
          .startsWith("HTTP/1.1 200");
    }
  }

  @Test
  void whenEveryVerbThreadIsBusyCallsGet503AndTheEventLoopStaysFree() throws Exception {
    CompletableFuture<HttpResponse<String>> first = filterAsync("slow");
    assertThat(entered.await(10, TimeUnit.SECONDS)).isTrue();
    List<CompletableFuture<HttpResponse<String>>> more = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      more.add(filterAsync("other-" + i));
    }
    // 1 thread busy, 1 queue slot: of these four, exactly one waits and three are refused
    await()
        .atMost(10, TimeUnit.SECONDS)
        .until(() -> more.stream().filter(CompletableFuture::isDone).count() == 3);
    assertThat(more.stream().filter(CompletableFuture::isDone).map(CompletableFuture::join))
        .allSatisfy(r -> assertThat(r.statusCode()).isEqualTo(503));
    assertThat(RawHttp.post(port, "/healthz-missing", "{}"))
        .as("the event loop still answers")
        .startsWith("HTTP/1.1 404");
    release.countDown();
    assertThat(first.get(10, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
    assertThat(meters.get("kse.http.refused").tag("reason", "Busy").counter().count()).isEqualTo(3);
  }
}
