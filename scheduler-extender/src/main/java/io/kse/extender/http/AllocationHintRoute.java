package io.kse.extender.http;

import io.kse.extender.log.Untrusted;
import io.kse.extender.metrics.ExtenderMetrics;
import io.kse.slurm.HostList;
import io.kse.slurm.cache.SlurmHookEvents;
import io.vertx.ext.web.RoutingContext;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.List;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * {@code POST /hooks/slurm-allocation?job=N[&event=allocated|end][&nodes=HOSTLIST]}: Slurm's
 * PrologSlurmctld saying it allocated job N, or its EpilogSlurmctld saying job N ended on those
 * nodes (manifests/slurm/kse-allocation-hint; the hook reports every job's end, so that a job
 * preempted for a placeholder is known without listing everyone's jobs); {@code
 * ?event=node&nodes=HOSTLIST}: a Slurm node trigger (strigger) saying those nodes went down,
 * drained, failed, came up or resumed. Only a hint — the cache then looks through slurmrestd as
 * always — but still only from loopback or with the token of {@code
 * KSE_ALLOCATION_HINT_TOKEN_FILE}: a stranger must not make us poll Slurm.
 */
public final class AllocationHintRoute {
  private static final org.slf4j.Logger LOG =
      org.slf4j.LoggerFactory.getLogger(AllocationHintRoute.class);

  /** Names in one hint's node list, at most: a job on more nodes than this is not ours to care. */
  static final int MAX_NODES = 20_000;

  private final SlurmHookEvents events;
  private final Optional<byte[]> token;
  private final ExtenderMetrics metrics;
  private volatile Predicate<String> trusted = ExtenderServer::isLoopback;

  public AllocationHintRoute(
      SlurmHookEvents events, Optional<String> token, ExtenderMetrics metrics) {
    this.events = events;
    this.token = token.map(t -> t.getBytes(StandardCharsets.UTF_8));
    this.metrics = metrics;
  }

  void trust(Predicate<String> addresses) {
    trusted = addresses;
  }

  void hint(RoutingContext ctx) {
    if (!trusted.test(ExtenderServer.remoteHost(ctx.request()))) {
      if (token.isEmpty()) {
        refuse(
            ctx,
            403,
            "Forbidden",
            "allocation hints are taken from loopback only unless"
                + " KSE_ALLOCATION_HINT_TOKEN_FILE is set");
        return;
      }
      byte[] given = ExtenderServer.bearerToken(ctx.request()).getBytes(StandardCharsets.UTF_8);
      if (!MessageDigest.isEqual(given, token.get())) {
        refuse(
            ctx, 401, "Unauthorized", "an allocation hint needs the hint token as a bearer token");
        return;
      }
    }
    String job;
    String event;
    String nodeList;
    try {
      job = ctx.request().getParam("job");
      event = ctx.request().getParam("event", "allocated");
      nodeList = ctx.request().getParam("nodes", "");
    } catch (IllegalArgumentException e) { // a malformed percent-escape in the query string
      metrics.allocationHint("invalid");
      Responses.problem(
          ctx,
          400,
          "BadRequest",
          "the query string is not valid percent-encoding: "
              + Untrusted.text(String.valueOf(ctx.request().query())));
      return;
    }
    boolean nodeEvent = event.equals("node");
    if (nodeEvent ? job != null : job == null || !job.matches("[0-9]{1,18}")) {
      metrics.allocationHint("invalid");
      Responses.problem(
          ctx,
          400,
          "BadRequest",
          nodeEvent
              ? "a node event names nodes, not a job, got job '" + Untrusted.text(job) + "'"
              : "job must be a Slurm job id (digits), got '"
                  + Untrusted.text(job == null ? "" : job)
                  + "'");
      return;
    }
    if (!event.equals("allocated") && !event.equals("end") && !nodeEvent) {
      metrics.allocationHint("invalid");
      Responses.problem(
          ctx,
          400,
          "BadRequest",
          "event must be allocated, end or node, got '" + Untrusted.text(event) + "'");
      return;
    }
    List<String> nodes;
    try {
      nodes = HostList.expand(nodeList, MAX_NODES);
    } catch (RuntimeException e) {
      metrics.allocationHint("invalid");
      Responses.problem(
          ctx,
          400,
          "BadRequest",
          "nodes must be a Slurm host list of at most "
              + MAX_NODES
              + " names, got '"
              + Untrusted.text(nodeList)
              + "': "
              + Untrusted.text(String.valueOf(e.getMessage())));
      return;
    }
    if (nodeEvent && nodes.isEmpty()) {
      metrics.allocationHint("invalid");
      Responses.problem(ctx, 400, "BadRequest", "a node event needs nodes (a Slurm host list)");
      return;
    }
    LOG.debug("allocation_hint slurmJob={} event={} nodes={}", job, event, nodes);
    switch (event) {
      case "end" -> events.ended(Long.parseLong(job), nodes);
      case "node" -> events.nodesChanged(nodes);
      default -> events.allocated(Long.parseLong(job));
    }
    metrics.allocationHint("accepted");
    ctx.response().setStatusCode(202).end();
  }

  private void refuse(RoutingContext ctx, int status, String reason, String message) {
    metrics.allocationHint("refused");
    Responses.problem(ctx, status, reason, message);
  }
}
