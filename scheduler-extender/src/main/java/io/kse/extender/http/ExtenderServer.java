package io.kse.extender.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kse.extender.filter.BindService;
import io.kse.extender.filter.FilterService;
import io.kse.extender.filter.FilterVerdict;
import io.kse.extender.metrics.ExtenderMetrics;
import io.kse.extender.wire.BadExtenderRequestException;
import io.kse.extender.wire.FilterRequest;
import io.kse.extender.wire.FilterResponse;
import io.kse.extender.wire.PodRef;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;
import java.io.IOException;
import java.util.Map;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The HTTP surface: kube-scheduler's extender/v1 verbs plus health, readiness, metrics and explain.
 * Verbs answer 200 with the protocol's own {@code Error} field when a request parses but cannot be
 * decided; unreadable or oversized bodies get 400 with a message naming the problem.
 */
public final class ExtenderServer {
  private static final Logger LOG = LoggerFactory.getLogger(ExtenderServer.class);
  private static final ObjectMapper JSON = new ObjectMapper();

  private final FilterService filter;
  private final BindService bind;
  private final ExtenderMetrics metrics;
  private final BooleanSupplier ready;
  private final BooleanSupplier synced;
  private final Supplier<String> scrape;
  private final Function<PodRef, Optional<JsonNode>> explain;
  private final long bodyLimit;

  /** Last reason logged per pod UID, so a retried filter call logs only when its answer changes. */
  private final Map<String, String> lastVerdict = new java.util.concurrent.ConcurrentHashMap<>();

  static final String NOT_SYNCED =
      "kse: starting up, the Slurm job cache or the pod informer is not synced yet; retry";

  /** Deleted pods never say goodbye here; forgetting everything now and then bounds the map. */
  static final int MAX_REMEMBERED_VERDICTS = 50_000;

  public ExtenderServer(
      FilterService filter,
      BindService bind,
      ExtenderMetrics metrics,
      BooleanSupplier ready,
      BooleanSupplier synced,
      Supplier<String> scrape,
      Function<PodRef, Optional<JsonNode>> explain,
      long bodyLimit) {
    this.filter = filter;
    this.bind = bind;
    this.metrics = metrics;
    this.ready = ready;
    this.synced = synced;
    this.scrape = scrape;
    this.explain = explain;
    this.bodyLimit = bodyLimit;
  }

  public Router router(Vertx vertx) {
    Router r = Router.router(vertx);
    r.route().handler(BodyHandler.create(false).setBodyLimit(bodyLimit));
    r.post("/filter").handler(ctx -> verb(ctx, "filter", this::filter));
    r.post("/prioritize").handler(ctx -> verb(ctx, "prioritize", this::prioritize));
    r.post("/preempt").handler(ctx -> verb(ctx, "preempt", this::preempt));
    // binding is an API call: off the event loop
    r.post("/bind")
        .handler(
            ctx -> {
              long start = System.nanoTime();
              JsonNode args;
              try {
                args = tree(ctx, "ExtenderBindingArgs");
              } catch (BadExtenderRequestException e) {
                badRequest(ctx, "bind", e.getMessage());
                return;
              }
              PodRef pod =
                  new PodRef(
                      text(args, "PodNamespace"), text(args, "PodName"), text(args, "PodUID"));
              String node = text(args, "Node");
              if (pod.name().isEmpty() || pod.uid().isEmpty() || node.isEmpty()) {
                badRequest(ctx, "bind", "ExtenderBindingArgs needs PodName, PodUID and Node");
                return;
              }
              vertx
                  .executeBlocking(() -> bind.bind(pod, node), false)
                  .onComplete(
                      res -> {
                        String error =
                            res.succeeded() ? res.result() : "kse: bind crashed: " + res.cause();
                        metrics.verb(
                            "bind", error.isEmpty() ? "bound" : "error", System.nanoTime() - start);
                        json(
                            ctx,
                            200,
                            JSON.createObjectNode().put("Error", error).toString().getBytes());
                      });
            });
    r.get("/healthz").handler(ctx -> ctx.response().end("ok"));
    r.get("/readyz")
        .handler(
            ctx ->
                ctx.response()
                    .setStatusCode(ready.getAsBoolean() ? 200 : 503)
                    .end(
                        ready.getAsBoolean()
                            ? "ready"
                            : "not ready: Slurm cache or pod informer not synced"));
    r.get("/metrics")
        .handler(
            ctx ->
                ctx.response()
                    .putHeader("Content-Type", "text/plain; version=0.0.4")
                    .end(scrape.get()));
    r.get("/explain/:namespace/:pod")
        .handler(
            ctx -> {
              Optional<JsonNode> e =
                  explain.apply(new PodRef(ctx.pathParam("namespace"), ctx.pathParam("pod"), ""));
              if (e.isEmpty()) {
                problem(
                    ctx,
                    404,
                    "NotFound",
                    "no pod "
                        + ctx.pathParam("namespace")
                        + "/"
                        + ctx.pathParam("pod")
                        + " of this scheduler is known");
              } else {
                json(ctx, 200, e.get().toPrettyString().getBytes());
              }
            });
    r.errorHandler(
        413,
        ctx -> problem(ctx, 400, "BadRequest", "request body exceeds " + bodyLimit + " bytes"));
    r.errorHandler(
        404,
        ctx ->
            problem(
                ctx,
                404,
                "NotFound",
                "no route " + ctx.request().method() + " " + ctx.request().path()));
    r.errorHandler(
        405,
        ctx ->
            problem(
                ctx,
                405,
                "MethodNotAllowed",
                ctx.request().method() + " is not allowed on " + ctx.request().path()));
    r.errorHandler(
        500,
        ctx -> {
          LOG.error("http_request_failed path={}", ctx.request().path(), ctx.failure());
          problem(ctx, 500, "InternalError", "internal error; see the extender's log");
        });
    return r;
  }

  /** A verb's answer and the outcome tag for its latency metric. */
  private record Answer(byte[] body, String outcome) {}

  private interface Verb {
    Answer handle(byte[] body);
  }

  private void verb(RoutingContext ctx, String name, Verb v) {
    long start = System.nanoTime();
    byte[] body = ctx.body().buffer() == null ? new byte[0] : ctx.body().buffer().getBytes();
    String outcome = "bad_request";
    try {
      Answer a = v.handle(body);
      outcome = a.outcome();
      json(ctx, 200, a.body());
    } catch (BadExtenderRequestException e) {
      badRequest(ctx, name, e.getMessage());
    } finally {
      metrics.verb(name, outcome, System.nanoTime() - start);
    }
  }

  private Answer filter(byte[] body) {
    FilterRequest req = FilterRequest.parse(body);
    if (!synced.getAsBoolean()) {
      // an answer from half a picture would park the pod as unschedulable: ask for a retry
      return new Answer(FilterResponse.error(NOT_SYNCED), "not_synced");
    }
    FilterVerdict v = filter.filter(req);
    byte[] out = FilterResponse.write(req, v.passing(), v.reason(), false);
    // one INFO line per decision change, not per retried call
    if (lastVerdict.size() > MAX_REMEMBERED_VERDICTS) {
      lastVerdict.clear(); // at worst one extra log line per pod
    }
    if (!v.reason().equals(lastVerdict.put(req.pod().uid(), v.reason()))) {
      LOG.info(
          "filter pod={} uid={} verdict={} passing={} reason=\"{}\"",
          req.pod(),
          req.pod().uid(),
          v.code(),
          v.passing(),
          v.reason());
    }
    return new Answer(out, v.code());
  }

  private Answer prioritize(byte[] body) {
    FilterRequest req = FilterRequest.parse(body);
    FilterVerdict v = filter.filter(req);
    ArrayNode out = JSON.createArrayNode();
    for (String n : req.nodeNames()) {
      out.addObject().put("Host", n).put("Score", v.passing().contains(n) ? 10 : 0);
    }
    return new Answer(out.toString().getBytes(), v.code());
  }

  /**
   * Kubernetes-side preemption may evict pods only on the node Slurm allocated to the preemptor;
   * every other candidate node is vetoed, so nothing unrelated is evicted for a pod waiting on
   * Slurm.
   */
  private Answer preempt(byte[] body) {
    JsonNode args = parse(body, "ExtenderPreemptionArgs");
    JsonNode pod = args.path("Pod");
    if (!pod.isObject()) {
      throw new BadExtenderRequestException("ExtenderPreemptionArgs.Pod is missing");
    }
    // the filter decision needs only who the pod is and which nodes are candidates
    JsonNode meta = pod.path("metadata");
    PodRef ref =
        new PodRef(
            meta.path("namespace").asText("default"),
            meta.path("name").asText(""),
            meta.path("uid").asText(""));
    if (ref.name().isEmpty() || ref.uid().isEmpty()) {
      throw new BadExtenderRequestException(
          "ExtenderPreemptionArgs.Pod has no metadata.uid or metadata.name");
    }
    JsonNode candidates =
        args.path("NodeNameToMetaVictims").isObject()
            ? args.path("NodeNameToMetaVictims")
            : args.path("NodeNameToVictims");
    FilterVerdict v =
        filter.filter(new FilterRequest(ref, "", Map.of(), names(candidates), Map.of(), false));
    ObjectNode result = JSON.createObjectNode();
    ObjectNode victims = result.putObject("NodeNameToMetaVictims");
    for (String node : v.passing()) {
      JsonNode c = candidates.path(node);
      ObjectNode out = victims.putObject(node);
      ArrayNode pods = out.putArray("Pods");
      for (JsonNode p : c.path("Pods")) {
        String uid =
            p.has("UID") ? p.path("UID").asText() : p.path("metadata").path("uid").asText();
        pods.addObject().put("UID", uid);
      }
      out.put("NumPDBViolations", c.path("NumPDBViolations").asLong(0));
    }
    return new Answer(
        result.toString().getBytes(), v.passing().isEmpty() ? "vetoed" : "allocated_node_only");
  }

  private static java.util.List<String> names(JsonNode object) {
    java.util.List<String> out = new java.util.ArrayList<>();
    object.fieldNames().forEachRemaining(out::add);
    return out;
  }

  private static JsonNode tree(RoutingContext ctx, String what) {
    return parse(ctx.body().buffer() == null ? new byte[0] : ctx.body().buffer().getBytes(), what);
  }

  private static JsonNode parse(byte[] body, String what) {
    try {
      JsonNode n = JSON.readTree(body);
      if (n == null || !n.isObject()) {
        throw new BadExtenderRequestException(what + " must be a JSON object");
      }
      return n;
    } catch (IOException e) {
      throw new BadExtenderRequestException(
          what + " is not valid JSON: " + e.getMessage().lines().findFirst().orElse(""));
    }
  }

  private static String text(JsonNode n, String field) {
    JsonNode v = n.path(field);
    return v.isTextual() ? v.asText() : "";
  }

  private void badRequest(RoutingContext ctx, String verb, String message) {
    metrics.badRequest(verb);
    LOG.debug("bad_request verb={} message=\"{}\"", verb, message);
    problem(ctx, 400, "BadRequest", message);
  }

  private static void problem(RoutingContext ctx, int status, String error, String message) {
    ObjectNode o =
        JSON.createObjectNode().put("status", status).put("error", error).put("message", message);
    json(ctx, status, o.toString().getBytes());
  }

  private static void json(RoutingContext ctx, int status, byte[] body) {
    if (ctx.response().ended()) {
      return;
    }
    ctx.response()
        .setStatusCode(status)
        .putHeader("Content-Type", "application/json")
        .end(Buffer.buffer(body));
  }
}
