package io.kse.bench.service;

import io.kse.bench.FilterFixture;
import io.kse.extender.bind.BindService;
import io.kse.extender.http.ExtenderServer;
import io.kse.extender.http.HttpLimits;
import io.kse.extender.k8s.NodeNames;
import io.kse.extender.k8s.PodActions;
import io.kse.extender.k8s.PodBinder;
import io.kse.extender.k8s.PodSource;
import io.kse.extender.metrics.ExtenderMetrics;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * The service tier: the extender's real HTTP server (Vert.x, the same router as in production) on
 * loopback, answering {@code POST /filter} with 5,000 node names from a Slurm cache holding 1,000
 * pending training jobs, driven by 1, 4 and 16 closed-loop clients (each sends its next call when
 * the previous answer arrived, as kube-scheduler's serial scheduling cycle does — so the load is
 * bounded). Prints {@code service.*} figures.
 *
 * <pre>java -cp benchmarks.jar io.kse.bench.service.HttpFilterLoad [--seconds 10] [--nodes 5000]
 * </pre>
 */
public final class HttpFilterLoad {
  public static void main(String[] args) throws Exception {
    int seconds = 10;
    int nodes = 5000;
    boolean serve = false;
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--seconds" -> seconds = Integer.parseInt(args[++i]);
        case "--nodes" -> nodes = Integer.parseInt(args[++i]);
        case "--serve" -> serve = true;
        default -> throw new IllegalArgumentException("unknown argument " + args[i]);
      }
    }
    if (serve) {
      serve(nodes);
      return;
    }
    // the server in a JVM of its own, as in production: the load generator's threads, allocation
    // and GC no longer share a heap and JIT with it (they still share the 2 cores)
    Process server =
        new ProcessBuilder(
                ProcessHandle.current().info().command().orElse("java"),
                "-cp",
                System.getProperty("java.class.path"),
                HttpFilterLoad.class.getName(),
                "--serve",
                "--nodes",
                Integer.toString(nodes))
            .redirectError(ProcessBuilder.Redirect.INHERIT)
            .start();
    try {
      java.io.BufferedReader out =
          new java.io.BufferedReader(
              new java.io.InputStreamReader(
                  server.getInputStream(), java.nio.charset.StandardCharsets.UTF_8));
      String[] ports = out.readLine().split(" ");
      // the server's log lines after its ports: read and dropped, so that a full pipe never
      // blocks it
      Thread drain =
          new Thread(
              () -> {
                try {
                  while (out.readLine() != null) {
                    // dropped
                  }
                } catch (java.io.IOException e) {
                  // the server went
                }
              });
      drain.setDaemon(true);
      drain.start();
      URI uri = URI.create("http://127.0.0.1:" + ports[0] + "/filter");
      URI totals = URI.create("http://127.0.0.1:" + ports[1] + "/metrics");
      byte[] body = FilterFixture.body(nodes, false);
      System.out.printf("service.request_bytes=%d%n", body.length);
      System.out.println("service.load_generator=own process");
      run(uri, body, 4, 5); // warm-up: JIT, connection pools
      for (int clients : new int[] {1, 4, 16}) {
        double[] before = filterTotals(totals);
        long[] lat = run(uri, body, clients, seconds);
        // the server's own share: from the request's arrival to its answer written
        double[] after = filterTotals(totals);
        double serverMeanMs = (after[0] - before[0]) / Math.max(1, after[1] - before[1]);
        System.out.printf("service.c%d.server_mean_ms=%.3f%n", clients, serverMeanMs);
        Arrays.sort(lat);
        System.out.printf(
            "service.c%d.calls_per_s=%.0f%nservice.c%d.p50_ms=%.3f%nservice.c%d.p99_ms=%.3f%n"
                + "service.c%d.max_ms=%.3f%n",
            clients,
            lat.length / (double) seconds,
            clients,
            pct(lat, 0.50),
            clients,
            pct(lat, 0.99),
            clients,
            lat[lat.length - 1] / 1e6);
      }
    } finally {
      server.destroy();
    }
    System.exit(0);
  }

  /**
   * The server side: the extender's filter route over a Slurm cache of {@code nodes} nodes; prints
   * "VERBS_PORT OPS_PORT" and serves until its standard input closes (the load generator exited).
   * Its ops listener answers the filter timer's totals.
   */
  private static void serve(int nodes) throws Exception {
    var slurm = FilterFixture.cache(nodes, true);
    var filter =
        new io.kse.extender.filter.FilterService(
            slurm,
            new io.kse.extender.lifecycle.PlaceholderRegistry(),
            new NodeNames(),
            p -> {},
            io.kse.extender.lifecycle.Placement::of,
            slurm::allocationHinted);
    PodActions none = PodActions.none();
    PodBinder binder = (pod, node) -> new PodBinder.Outcome(PodBinder.Result.BOUND, "bound");
    SimpleMeterRegistry meters = new SimpleMeterRegistry();
    ExtenderServer routes =
        new ExtenderServer(
            filter,
            new BindService(
                slurm,
                PodSource.none(),
                new NodeNames(),
                binder,
                none,
                p -> {},
                io.kse.extender.lifecycle.Placement::of,
                io.kse.extender.dra.GpuClaims.none()),
            new ExtenderMetrics(meters),
            () -> true,
            () -> true,
            () -> {
              var timers = meters.find("kse.filter.duration").timers();
              return timers.stream().mapToDouble(t -> t.totalTime(TimeUnit.MILLISECONDS)).sum()
                  + " "
                  + timers.stream().mapToLong(t -> t.count()).sum();
            },
            p -> Optional.empty(),
            io.kse.extender.k8s.CallerCheck.nobody(),
            HttpLimits.forTests(64L * 1024 * 1024),
            () -> 100_000,
            java.time.Clock.systemUTC());
    Vertx vertx = Vertx.vertx();
    HttpServer verbs = await(routes.listen(vertx, "127.0.0.1", 0));
    HttpServer ops = await(routes.listenOps(vertx, "127.0.0.1", 0));
    System.out.println(verbs.actualPort() + " " + ops.actualPort());
    System.out.flush();
    while (System.in.read() >= 0) {
      // until the load generator goes
    }
    System.exit(0);
  }

  private static HttpServer await(io.vertx.core.Future<HttpServer> listening) throws Exception {
    return listening.toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  /** Total milliseconds and calls of the server's filter timers, from its ops listener. */
  private static double[] filterTotals(URI totals) throws Exception {
    String[] t =
        HttpClient.newHttpClient()
            .send(HttpRequest.newBuilder(totals).build(), HttpResponse.BodyHandlers.ofString())
            .body()
            .trim()
            .split(" ");
    return new double[] {Double.parseDouble(t[0]), Double.parseDouble(t[1])};
  }

  /** {@code clients} closed-loop senders for {@code seconds}; every call's latency in nanos. */
  private static long[] run(URI uri, byte[] body, int clients, int seconds) throws Exception {
    List<long[]> perClient = new ArrayList<>();
    int[] counts = new int[clients];
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    CountDownLatch done = new CountDownLatch(clients);
    for (int c = 0; c < clients; c++) {
      long[] lat = new long[2_000_000];
      perClient.add(lat);
      int k = c;
      Thread t =
          new Thread(
              () -> {
                HttpClient http =
                    HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
                HttpRequest req =
                    HttpRequest.newBuilder(uri)
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofByteArray(body))
                        .build();
                try {
                  while (System.nanoTime() < end && counts[k] < lat.length) {
                    long t0 = System.nanoTime();
                    HttpResponse<byte[]> r =
                        http.send(req, HttpResponse.BodyHandlers.ofByteArray());
                    if (r.statusCode() != 200) {
                      throw new IllegalStateException("HTTP " + r.statusCode());
                    }
                    lat[counts[k]++] = System.nanoTime() - t0;
                  }
                } catch (Exception e) {
                  throw new IllegalStateException(e);
                } finally {
                  done.countDown();
                }
              });
      t.start();
    }
    done.await();
    int total = Arrays.stream(counts).sum();
    long[] all = new long[total];
    int at = 0;
    for (int c = 0; c < clients; c++) {
      System.arraycopy(perClient.get(c), 0, all, at, counts[c]);
      at += counts[c];
    }
    return all;
  }

  private static double pct(long[] sorted, double q) {
    int i = (int) Math.ceil(q * sorted.length) - 1;
    return sorted[Math.max(0, i)] / 1e6;
  }
}
