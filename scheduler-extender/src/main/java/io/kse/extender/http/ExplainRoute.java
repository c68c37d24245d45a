package io.kse.extender.http;

import com.fasterxml.jackson.databind.JsonNode;
import io.kse.extender.k8s.CallerCheck;
import io.kse.extender.k8s.PodRef;
import io.vertx.core.Vertx;
import io.vertx.ext.web.RoutingContext;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * {@code GET /explain/{namespace}/{pod}}: the decision record names pod UIDs, job ids and nodes, so
 * it answers the pod itself (loopback) and otherwise only a bearer token of someone Kubernetes lets
 * get pods in that namespace.
 */
final class ExplainRoute {
  private final Function<PodRef, Optional<JsonNode>> explain;
  private final CallerCheck callers;
  private final ExecutorService checks;

  /** Callers trusted without a token: the pod itself. Tests of the token path trust nobody. */
  private volatile Predicate<String> trusted = ExtenderServer::isLoopback;

  ExplainRoute(
      Function<PodRef, Optional<JsonNode>> explain, CallerCheck callers, ExecutorService checks) {
    this.explain = explain;
    this.callers = callers;
    this.checks = checks;
  }

  void trust(Predicate<String> addresses) {
    trusted = addresses;
  }

  /** Loopback callers are trusted (the pod itself); others must be allowed to read its pods. */
  void explain(RoutingContext ctx) {
    String ns = ctx.pathParam("namespace");
    if (trusted.test(ExtenderServer.remoteHost(ctx.request()))) {
      explainNow(ctx, ns);
      return;
    }
    String token = ExtenderServer.bearerToken(ctx.request());
    if (token.isEmpty()) {
      Responses.problem(
          ctx,
          401,
          "Unauthorized",
          "explain needs a bearer token of someone who may get pods in " + ns);
      return;
    }
    io.vertx.core.Context loop = Vertx.currentContext();
    try {
      checks.execute(
          () -> {
            CallerCheck.Verdict v = callers.mayReadPods(token, ns);
            loop.runOnContext(
                x -> {
                  switch (v) {
                    case ALLOWED -> explainNow(ctx, ns);
                    case FORBIDDEN ->
                        Responses.problem(
                            ctx, 403, "Forbidden", "the caller may not get pods in " + ns);
                    default ->
                        Responses.problem(ctx, 401, "Unauthorized", "the token is not valid");
                  }
                });
          });
    } catch (java.util.concurrent.RejectedExecutionException e) {
      Responses.problem(ctx, 503, "Busy", "the extender is busy; retry");
    }
  }

  private void explainNow(RoutingContext ctx, String ns) {
    String name = ctx.pathParam("pod");
    Optional<JsonNode> e = explain.apply(new PodRef(ns, name, ""));
    if (e.isEmpty()) {
      Responses.problem(
          ctx, 404, "NotFound", "no pod " + ns + "/" + name + " of this scheduler is known");
    } else {
      Responses.json(ctx, 200, Responses.utf8(e.get().toPrettyString()));
    }
  }
}
