package io.kse.extender.http;

import io.kse.extender.lifecycle.GpuHold;
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

  /** The largest job id Slurm can have: 0xfffffffe and 0xffffffff are NO_VAL and INFINITE. */
  static final long MAX_JOB_ID = 0xfffffffdL;

  /** The query's keys, exactly: anything else is a broken or forged hook, refused. */
  static final java.util.Set<String> KEYS = java.util.Set.of("job", "event", "nodes");

  /** The keys of a hold's query, exactly. */
  static final java.util.Set<String> HOLD_KEYS = java.util.Set.of("job", "node");

  private final SlurmHookEvents events;
  private final java.util.function.BiFunction<Long, String, Optional<GpuHold.Verdict>> holds;
  private final Optional<byte[]> token;
  private final ExtenderMetrics metrics;
  private volatile Predicate<String> trusted = ExtenderServer::isLoopback;
  private final HintForwarder forwarder;

  /**
   * @param holds the hold verdict for a job and Slurm node; empty while it cannot be known
   */
  public AllocationHintRoute(
      SlurmHookEvents events,
      java.util.function.BiFunction<Long, String, Optional<GpuHold.Verdict>> holds,
      Optional<String> token,
      ExtenderMetrics metrics) {
    this(events, holds, token, metrics, () -> true, Optional::empty);
  }

  /**
   * @param isWriter whether this replica is the writer
   * @param writerAddress the writer's ops address, where a standby passes hints on
   */
  public AllocationHintRoute(
      SlurmHookEvents events,
      java.util.function.BiFunction<Long, String, Optional<GpuHold.Verdict>> holds,
      Optional<String> token,
      ExtenderMetrics metrics,
      java.util.function.BooleanSupplier isWriter,
      java.util.function.Supplier<Optional<String>> writerAddress) {
    this.events = events;
    this.holds = holds;
    this.token = token.map(t -> t.getBytes(StandardCharsets.UTF_8));
    this.metrics = metrics;
    this.forwarder = new HintForwarder(isWriter, writerAddress, token, metrics::allocationHint);
  }

  void trust(Predicate<String> addresses) {
    trusted = addresses;
  }

  void hint(RoutingContext ctx) {
    if (!authorized(ctx)) {
      return;
    }
    Optional<java.util.Map<String, List<String>>> parsed =
        query(ctx, () -> metrics.allocationHint("invalid"));
    if (parsed.isEmpty()) {
      return;
    }
    java.util.Map<String, List<String>> query = parsed.get();
    Optional<String> wrongKey = wrongKey(query, KEYS);
    if (wrongKey.isPresent()) {
      metrics.allocationHint("invalid");
      Responses.problem(
          ctx,
          400,
          "BadRequest",
          "a hint takes job, event and nodes, each at most once (names are case-sensitive), got '"
              + Untrusted.text(wrongKey.get())
              + "'"
              + (KEYS.contains(wrongKey.get()) ? " twice" : ""));
      return;
    }
    String job = first(query, "job", null);
    String event = first(query, "event", "allocated");
    String nodeList = first(query, "nodes", "");
    boolean nodeEvent = event.equals("node");
    if (nodeEvent ? job != null : !isJobId(job)) {
      metrics.allocationHint("invalid");
      Responses.problem(
          ctx,
          400,
          "BadRequest",
          nodeEvent
              ? "a node event names nodes, not a job, got job '" + Untrusted.text(job) + "'"
              : "job must be a Slurm job id (1 to "
                  + MAX_JOB_ID
                  + "), got '"
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
    if (ctx.request().getHeader(HintForwarder.FORWARDED_BY) == null) {
      forwarder.forward(ctx.vertx(), ctx.request().uri());
    }
  }

  /** From loopback, or with the hint token; else refused (and false). */
  private boolean authorized(RoutingContext ctx) {
    if (trusted.test(ExtenderServer.remoteHost(ctx.request()))) {
      return true;
    }
    if (token.isEmpty()) {
      refuse(
          ctx,
          403,
          "Forbidden",
          "Slurm's hooks are taken from loopback only unless KSE_ALLOCATION_HINT_TOKEN_FILE is set");
      return false;
    }
    byte[] given = ExtenderServer.bearerToken(ctx.request()).getBytes(StandardCharsets.UTF_8);
    if (!MessageDigest.isEqual(given, token.get())) {
      refuse(ctx, 401, "Unauthorized", "Slurm's hooks need the hint token as a bearer token");
      return false;
    }
    return true;
  }

  /**
   * {@code GET /hooks/slurm-hold?job=N&node=NAME}: Slurm's node Epilog asking whether a pod of
   * placeholder N still runs on NAME ({@link GpuHold}). 200 with one line, {@code hold …} or {@code
   * release …}; 503 {@code unknown …} until the pod informer is synced (the Epilog asks again).
   */
  void hold(RoutingContext ctx) {
    if (!authorized(ctx)) {
      return;
    }
    Optional<java.util.Map<String, List<String>>> parsed =
        query(ctx, () -> metrics.gpuHold("invalid"));
    if (parsed.isEmpty()) {
      return;
    }
    java.util.Map<String, List<String>> query = parsed.get();
    String job = first(query, "job", null);
    String node = first(query, "node", "");
    if (wrongKey(query, HOLD_KEYS).isPresent()
        || !isJobId(job)
        || !node.matches("[A-Za-z0-9._-]{1,253}")) {
      metrics.gpuHold("invalid");
      Responses.problem(
          ctx,
          400,
          "BadRequest",
          "a hold asks job (1 to "
              + MAX_JOB_ID
              + ") and node (a Slurm node name), once each, got '"
              + Untrusted.text(String.valueOf(ctx.request().query()))
              + "'");
      return;
    }
    Optional<GpuHold.Verdict> v = holds.apply(Long.parseLong(job), node);
    ctx.response().putHeader("Content-Type", "text/plain; charset=utf-8");
    if (v.isEmpty()) {
      metrics.gpuHold("unknown");
      ctx.response().setStatusCode(503).end("unknown: the pod informer is not synced yet\n");
      return;
    }
    ctx.response().setStatusCode(200).end(v.get().line() + "\n");
  }

  /**
   * The request's query, each key as sent with its values; empty, the caller {@code invalid} and
   * the request refused when it is not valid percent-encoding.
   */
  private static Optional<java.util.Map<String, List<String>>> query(
      RoutingContext ctx, Runnable invalid) {
    try {
      return Optional.of(query(ctx.request().query()));
    } catch (IllegalArgumentException e) { // a malformed percent-escape in the query string
      invalid.run();
      Responses.problem(
          ctx,
          400,
          "BadRequest",
          "the query string is not valid percent-encoding: "
              + Untrusted.text(String.valueOf(ctx.request().query())));
      return Optional.empty();
    }
  }

  /** The first key that is not one of {@code keys}, or is given twice. */
  private static Optional<String> wrongKey(
      java.util.Map<String, List<String>> query, java.util.Set<String> keys) {
    return query.entrySet().stream()
        .filter(e -> !keys.contains(e.getKey()) || e.getValue().size() > 1)
        .map(java.util.Map.Entry::getKey)
        .findFirst();
  }

  /** The query's keys as sent (Vert.x's own parameters ignore case), each with its values. */
  static java.util.Map<String, List<String>> query(String raw) {
    if (raw == null || raw.isEmpty()) {
      return java.util.Map.of();
    }
    return new io.netty.handler.codec.http.QueryStringDecoder(raw, StandardCharsets.UTF_8, false)
        .parameters();
  }

  private static String first(java.util.Map<String, List<String>> q, String key, String absent) {
    List<String> v = q.get(key);
    return v == null || v.isEmpty() ? absent : v.get(0);
  }

  /** Slurm's job ids are 32-bit, and its top two values mean "no value" and "infinite". */
  static boolean isJobId(String s) {
    if (s == null || !s.matches("[0-9]{1,10}")) {
      return false;
    }
    long id = Long.parseLong(s);
    return id >= 1 && id <= MAX_JOB_ID;
  }

  private void refuse(RoutingContext ctx, int status, String reason, String message) {
    metrics.allocationHint("refused");
    Responses.problem(ctx, status, reason, message);
  }
}
