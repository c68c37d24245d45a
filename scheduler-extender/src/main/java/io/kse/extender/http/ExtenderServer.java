package io.kse.extender.http;

import com.fasterxml.jackson.databind.JsonNode;
import io.kse.extender.bind.BindService;
import io.kse.extender.concurrent.DaemonThreads;
import io.kse.extender.filter.FilterService;
import io.kse.extender.k8s.CallerCheck;
import io.kse.extender.k8s.PodRef;
import io.kse.extender.metrics.ExtenderMetrics;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.ext.web.Router;
import java.time.Clock;
import java.util.Optional;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.function.IntSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The HTTP surface, on two listeners. The verbs (kube-scheduler's extender/v1 filter, prioritize,
 * preempt, bind) listen on loopback by default, since kube-scheduler runs in the same pod, or over
 * HTTPS with client certificates when it does not ({@link TlsFiles}). Health, readiness, metrics
 * and explain listen on their own port; explain answers loopback callers, and others only with a
 * bearer token of someone Kubernetes lets read pods in that namespace ({@link CallerCheck}). Verbs
 * answer 200 with the protocol's own {@code Error} field when a request parses but cannot be
 * decided; unreadable bodies get 400 naming the problem. Every request is received within {@link
 * HttpLimits} and computed off the event loop, so no caller can exhaust memory or stall the rest.
 */
public final class ExtenderServer implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ExtenderServer.class);

  private final FilterRoutes filterRoutes;
  private final BindRoute bindRoute;
  private final PreemptRoute preemptRoute;
  private final ExtenderMetrics metrics;
  private final BooleanSupplier ready;
  private final Supplier<String> scrape;
  private final ExplainRoute explainRoute;
  private final HttpLimits limits;
  private final Clock clock;
  private final ExecutorService verbPool;
  private final ExecutorService bindPool;
  private final ExecutorService opsPool;
  private final ConnectionGuard verbConnections;
  private final ConnectionGuard opsConnections;
  private volatile AllocationHintRoute allocationHints;
  private volatile BoundedBody body;

  static final String NOT_SYNCED = FilterRoutes.NOT_SYNCED;

  public ExtenderServer(
      FilterService filter,
      BindService bind,
      ExtenderMetrics metrics,
      BooleanSupplier ready,
      BooleanSupplier synced,
      Supplier<String> scrape,
      Function<PodRef, Optional<JsonNode>> explain,
      CallerCheck callers,
      HttpLimits limits,
      IntSupplier maxNodeNames,
      Clock clock) {
    this.filterRoutes = new FilterRoutes(filter, synced, maxNodeNames);
    this.bindRoute = new BindRoute(bind);
    this.preemptRoute = new PreemptRoute(filter, maxNodeNames);
    this.metrics = metrics;
    this.ready = ready;
    this.scrape = scrape;
    this.limits = limits;
    this.clock = clock;
    this.verbPool = bounded("kse-verb", limits.verbThreads(), limits.queuedVerbs());
    this.bindPool = bounded("kse-bind", limits.bindThreads(), limits.queuedVerbs());
    this.opsPool = bounded("kse-ops", 1, limits.queuedVerbs());
    this.explainRoute = new ExplainRoute(explain, callers, opsPool);
    // each listener its own capacity: callers of the ops port never take the verbs' connections
    this.verbConnections =
        new ConnectionGuard(
            limits.maxConnections(), limits.headTimeout(), metrics, System::nanoTime);
    this.opsConnections =
        new ConnectionGuard(
            limits.maxConnections(), limits.headTimeout(), metrics, System::nanoTime);
  }

  private static ExecutorService bounded(String name, int threads, int queue) {
    return new ThreadPoolExecutor(
        threads,
        threads,
        0,
        TimeUnit.MILLISECONDS,
        new ArrayBlockingQueue<>(queue),
        DaemonThreads.named(name),
        new ThreadPoolExecutor.AbortPolicy());
  }

  /**
   * Serves the verbs on {@code host:port} (0: any free port) with the connection limits applied;
   * over HTTPS requiring a client certificate when {@code tls} is given.
   */
  public Future<HttpServer> listen(Vertx vertx, String host, int port, Optional<TlsFiles> tls) {
    HttpServerOptions options = options(host, port);
    tls.ifPresent(t -> t.apply(options));
    return listen(vertx, options, verbConnections, verbRouter(vertx));
  }

  private static Future<HttpServer> listen(
      Vertx vertx, HttpServerOptions options, ConnectionGuard guard, Router router) {
    guard.sweepEverySecond(vertx);
    return vertx
        .createHttpServer(options)
        .connectionHandler(guard::opened)
        .requestHandler(
            request -> {
              guard.requestStarted(request);
              router.handle(request);
            })
        .listen();
  }

  /** Plain HTTP verbs (tests, benchmarks, loopback). */
  public Future<HttpServer> listen(Vertx vertx, String host, int port) {
    return listen(vertx, host, port, Optional.empty());
  }

  /** Takes Slurm's allocation hints on the ops listener; none set: the route answers 404. */
  public void allocationHints(AllocationHintRoute route) {
    this.allocationHints = route;
  }

  /** Serves health, readiness, metrics and explain on {@code host:port}. */
  public Future<HttpServer> listenOps(Vertx vertx, String host, int port) {
    return listen(vertx, options(host, port), opsConnections, opsRouter(vertx));
  }

  private HttpServerOptions options(String host, int port) {
    return new HttpServerOptions()
        .setHost(host)
        .setPort(port)
        // kube-scheduler speaks HTTP/1.1 to extenders; without h2c detection a connection is
        // counted (and limited) as soon as it opens, not after its first bytes
        .setHttp2ClearTextEnabled(false)
        .setIdleTimeout((int) limits.idleTimeout().toSeconds())
        .setIdleTimeoutUnit(TimeUnit.SECONDS);
  }

  /** Body bytes held right now over every connection. */
  long inFlightBytes() {
    return body == null ? 0 : body.inFlightBytes();
  }

  Router verbRouter(Vertx vertx) {
    Router r = Router.router(vertx);
    body = new BoundedBody(vertx, limits, metrics);
    VerbRunner verbs = new VerbRunner(verbPool, metrics, clock);
    VerbRunner binds = new VerbRunner(bindPool, metrics, clock);
    r.post("/filter").handler(body).handler(ctx -> verbs.run(ctx, "filter", filterRoutes::filter));
    r.post("/prioritize")
        .handler(body)
        .handler(ctx -> verbs.run(ctx, "prioritize", filterRoutes::prioritize));
    r.post("/preempt")
        .handler(body)
        .handler(ctx -> verbs.run(ctx, "preempt", preemptRoute::preempt));
    r.post("/bind").handler(body).handler(ctx -> binds.run(ctx, "bind", bindRoute::bind));
    errors(r);
    return r;
  }

  Router opsRouter(Vertx vertx) {
    Router r = Router.router(vertx);
    r.get("/healthz").handler(ctx -> ctx.response().end("ok"));
    r.get("/readyz")
        .handler(
            ctx -> {
              boolean ok = ready.getAsBoolean();
              ctx.response()
                  .setStatusCode(ok ? 200 : 503)
                  .end(ok ? "ready" : "not ready: Slurm cache or pod informer not synced");
            });
    r.get("/metrics")
        .handler(
            ctx ->
                ctx.response()
                    .putHeader("Content-Type", "text/plain; version=0.0.4")
                    .end(scrape.get()));
    r.get("/explain/:namespace/:pod").handler(explainRoute::explain);
    r.post("/hooks/slurm-allocation")
        .handler(
            ctx -> {
              AllocationHintRoute hints = allocationHints;
              if (hints == null) {
                ctx.next(); // 404
              } else {
                hints.hint(ctx);
              }
            });
    r.get("/hooks/slurm-hold")
        .handler(
            ctx -> {
              AllocationHintRoute hooks = allocationHints;
              if (hooks == null) {
                ctx.next(); // 404
              } else {
                hooks.hold(ctx);
              }
            });
    errors(r);
    return r;
  }

  /** For tests: no address is trusted, so every explain call needs a token. */
  void trustNoAddress() {
    explainRoute.trust(a -> false);
  }

  void trustLoopbackForTests() {
    explainRoute.trust(ExtenderServer::isLoopback);
  }

  /** The request's bearer token ("" without one). */
  static String bearerToken(io.vertx.core.http.HttpServerRequest request) {
    String auth = request.getHeader("Authorization");
    return auth != null && auth.regionMatches(true, 0, "Bearer ", 0, 7)
        ? auth.substring(7).trim()
        : "";
  }

  /** The caller's address ("" if unknown). */
  static String remoteHost(io.vertx.core.http.HttpServerRequest request) {
    return request.remoteAddress() == null ? "" : request.remoteAddress().hostAddress();
  }

  public static boolean isLoopback(String address) {
    if (address == null || address.isBlank()) {
      return false; // an unknown caller; InetAddress would read "" as localhost
    }
    try {
      return java.net.InetAddress.getByName(address).isLoopbackAddress();
    } catch (java.net.UnknownHostException e) {
      return false;
    }
  }

  private static void errors(Router r) {
    r.errorHandler(
        404,
        ctx ->
            Responses.problem(
                ctx,
                404,
                "NotFound",
                "no route " + ctx.request().method() + " " + ctx.request().path()));
    r.errorHandler(
        405,
        ctx ->
            Responses.problem(
                ctx,
                405,
                "MethodNotAllowed",
                ctx.request().method() + " is not allowed on " + ctx.request().path()));
    r.errorHandler(
        500,
        ctx -> {
          LOG.error("http_request_failed path={}", ctx.request().path(), ctx.failure());
          Responses.problem(ctx, 500, "InternalError", "internal error; see the extender's log");
        });
  }

  @Override
  public void close() {
    verbPool.shutdownNow();
    bindPool.shutdownNow();
    opsPool.shutdownNow();
  }
}
