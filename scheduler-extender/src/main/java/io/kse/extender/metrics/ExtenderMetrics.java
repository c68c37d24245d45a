package io.kse.extender.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The extender's own meters, named {@code kse.*} (Prometheus: {@code kse_*}). Tags take values from
 * closed sets only (verb outcomes, reason codes), never pod or node names.
 */
public final class ExtenderMetrics {
  private final MeterRegistry registry;
  private final Map<String, Timer> timers = new ConcurrentHashMap<>();
  private final Map<String, Counter> counters = new ConcurrentHashMap<>();
  private final java.util.List<Runnable> beforeScrape =
      new java.util.concurrent.CopyOnWriteArrayList<>();

  public ExtenderMetrics(MeterRegistry registry) {
    this.registry = registry;
  }

  public MeterRegistry registry() {
    return registry;
  }

  /** One extender verb call: {@code kse_<verb>_duration_seconds{outcome}}. */
  public void verb(String verb, String outcome, long nanos) {
    timers
        .computeIfAbsent(
            verb + "|" + outcome,
            k ->
                Timer.builder("kse." + verb + ".duration")
                    .description("kube-scheduler " + verb + " calls, as served by the extender")
                    .tag("outcome", outcome)
                    .serviceLevelObjectives(
                        Duration.ofNanos(50_000),
                        Duration.ofNanos(100_000),
                        Duration.ofNanos(250_000),
                        Duration.ofNanos(500_000),
                        Duration.ofMillis(1),
                        Duration.ofMillis(5),
                        Duration.ofMillis(25),
                        Duration.ofMillis(100),
                        Duration.ofMillis(500),
                        Duration.ofSeconds(1),
                        Duration.ofSeconds(5))
                    .register(registry))
        .record(nanos, java.util.concurrent.TimeUnit.NANOSECONDS);
  }

  /**
   * A Slurm preemption attributed to a placeholder: {@code
   * kse_preemptions_total{tier,victim_tier,attribution}}.
   *
   * @param attribution {@code exact} (the placeholder took the victim's nodes) or {@code inferred}
   *     (none did; charged to one of ours pending when it lost its run)
   */
  public void preemption(String tier, String victimTier, String attribution) {
    counters
        .computeIfAbsent(
            "pre|" + tier + "|" + victimTier + "|" + attribution,
            k ->
                Counter.builder("kse.preemptions")
                    .description(
                        "Slurm jobs preempted for placeholders, by the placeholder's tier, the"
                            + " victim's and how the pair was found (exact: the placeholder took its"
                            + " nodes; inferred: it lost its run while the placeholder was pending)")
                    .tag("tier", tier)
                    .tag("victim_tier", victimTier)
                    .tag("attribution", attribution)
                    .register(registry))
        .increment();
  }

  /** Pod created → its placeholder allocated: {@code kse_pod_allocation_seconds}. */
  public void allocated(Duration sinceCreation) {
    latency("kse.pod.allocation", "Pod creation to its Slurm placeholder running")
        .record(sinceCreation);
  }

  /** Pod created → bound: {@code kse_pod_bound_seconds}. */
  public void bound(Duration sinceCreation) {
    latency("kse.pod.bound", "Pod creation to binding").record(sinceCreation);
  }

  /**
   * A wake-up's API write, from its decision: waiting for a worker ({@code stage="queued"}: the
   * workers also submit the burst's placeholders) and the write itself ({@code stage="write"}):
   * {@code kse_wake_up_seconds}. In a burst, most of a pod's time from Slurm's allocation to
   * kube-scheduler's filter call was spent between the two (benchmarks/changes.md, issue 47).
   */
  public void wakeUp(Duration queued, Duration write) {
    wakeUpStage("queued").record(queued);
    wakeUpStage("write").record(write);
  }

  private Timer wakeUpStage(String stage) {
    return timers.computeIfAbsent(
        "wake|" + stage,
        k ->
            Timer.builder("kse.wake.up")
                .description("A woken pod's API write: waiting for a worker, then the write")
                .tag("stage", stage)
                .serviceLevelObjectives(io.kse.slurm.MetricNames.callBuckets())
                .register(registry));
  }

  private Timer latency(String name, String description) {
    return timers.computeIfAbsent(
        name,
        k ->
            Timer.builder(name)
                .description(description)
                .serviceLevelObjectives(
                    Duration.ofMillis(250),
                    Duration.ofMillis(500),
                    Duration.ofSeconds(1),
                    Duration.ofSeconds(2),
                    Duration.ofSeconds(5),
                    Duration.ofSeconds(10),
                    Duration.ofSeconds(30),
                    Duration.ofMinutes(1),
                    Duration.ofMinutes(5))
                .register(registry));
  }

  /** Placeholders the extender tracks, by state: {@code kse_placeholders{state}}. */
  public <T> void placeholders(
      java.util.function.ToLongFunction<T> countByState,
      java.util.List<T> states,
      java.util.function.Function<T, String> name) {
    for (T state : states) {
      io.micrometer.core.instrument.Gauge.builder(
              "kse.placeholders", () -> countByState.applyAsLong(state))
          .description("Placeholders by the extender's state")
          .tag("state", name.apply(state))
          .register(registry);
    }
  }

  /**
   * Placeholders kept for pods Terminating long past their deadline: {@code
   * kse_placeholders_held_for_terminating_pods}.
   */
  public void heldForTerminating(java.util.function.IntSupplier count) {
    io.micrometer.core.instrument.Gauge.builder(
            "kse.placeholders.held.for.terminating.pods", () -> count.getAsInt())
        .description(
            "Placeholders kept because their bound pod is Terminating long past its deadline")
        .register(registry);
  }

  /** Malformed requests: {@code kse_bad_requests_total{verb}}. */
  public void badRequest(String verb) {
    count("kse.bad.requests", "Requests answered with HTTP 400", "verb", verb);
  }

  /**
   * Requests refused before they were read or computed, by reason (PayloadTooLarge, Busy,
   * RequestTimeout, UnsupportedMediaType, TooManyConnections): {@code kse_http_refused_total}.
   */
  public void refused(String reason) {
    count("kse.http.refused", "Requests refused by the service's limits", "reason", reason);
  }

  /**
   * Evictions of pods whose job no longer holds their node, by result (evicted, gone,
   * blocked_by_pdb, failed): {@code kse_evictions_total}.
   */
  public void eviction(String result) {
    count(
        "kse.evictions",
        "Evictions of pods whose Slurm job no longer holds their node",
        "result",
        result);
  }

  /**
   * {@code kse_policy_rejected}: 1 while the policy file as last read is refused and an older
   * policy stays in force (KsePolicyRejected), 0 otherwise.
   */
  public void policyRejecting(java.util.function.BooleanSupplier rejecting) {
    io.micrometer.core.instrument.Gauge.builder(
            "kse.policy.rejected", rejecting, r -> r.getAsBoolean() ? 1 : 0)
        .description("1 while the policy file is refused and an older policy stays in force")
        .register(registry);
  }

  /**
   * {@code kse_topology_drift}: how many differences between Kubernetes' topology labels and
   * Slurm's node features the last check found (KseTopologyDrift).
   */
  public void topologyDrift(java.util.function.IntSupplier differences) {
    io.micrometer.core.instrument.Gauge.builder(
            "kse.topology.drift", differences, d -> d.getAsInt())
        .description(
            "Differences between the nodes' topology labels in Kubernetes and Slurm's features")
        .register(registry);
  }

  /** Policy reloads by result (applied, rejected): {@code kse_policy_reloads_total}. */
  public void policyReload(String result) {
    count("kse.policy.reloads", "Policy reloads by result", "result", result);
  }

  /**
   * Allocation hints from Slurm's hooks by result (accepted, refused, invalid; on a standby also
   * forwarded or forward_failed, passing them on to the writer): {@code
   * kse_allocation_hints_total}.
   */
  public void allocationHint(String result) {
    count("kse.allocation.hints", "Allocation hints from Slurm, by result", "result", result);
  }

  /** A node Epilog asked whether to hold a placeholder's node: {@code hold} or {@code release}. */
  public void gpuHold(String answer) {
    count(
        "kse.gpu.hold.answers",
        "Answers to Slurm's node Epilog: hold a placeholder's node while its pod runs, or release",
        "answer",
        answer);
  }

  /**
   * Counts holds asked for longer than the Epilog's bound (it then let the node go with a pod on
   * it); registered now, at zero, so that an alert sees its first increase.
   */
  public Runnable gpuHoldOverdue() {
    Counter c =
        Counter.builder("kse.gpu.hold.overdue")
            .description(
                "Placeholder nodes held past the Epilog's bound while a pod still ran there: Slurm"
                    + " may have handed the GPUs on")
            .register(registry);
    return c::increment;
  }

  /** Whether this replica is the writer (1) or a standby (0): {@code kse_writer}. */
  public void writer(java.util.function.BooleanSupplier isWriter) {
    io.micrometer.core.instrument.Gauge.builder("kse.writer", () -> isWriter.getAsBoolean() ? 1 : 0)
        .description("1 while this replica holds the writer Lease and converges placements")
        .register(registry);
  }

  /**
   * The oldest placeholder Slurm still has pending, by tier: {@code
   * kse_placeholder_pending_oldest_seconds{tier}} (no series for a tier with none pending).
   */
  public void oldestPending(java.util.function.Supplier<Map<String, Double>> secondsByTier) {
    byTier(
        "kse.placeholder.pending.oldest",
        "Seconds since the oldest still-pending placeholder of the tier was submitted",
        "seconds",
        secondsByTier);
  }

  /**
   * How much of its preemption budget each tier has used in the budget's window, the larger of GPUs
   * and nodes (1 = used up): {@code kse_preemption_budget_used_ratio{tier}}.
   */
  public void budgetUse(java.util.function.Supplier<Map<String, Double>> ratioByTier) {
    byTier(
        "kse.preemption.budget.used",
        "Share of the tier's preemption budget used in its window (1 = used up)",
        "ratio",
        ratioByTier);
  }

  /**
   * A gauge per tier whose set of tiers changes with the policy and the work: read at every scrape,
   * so a tier that is gone has no series rather than a stale one.
   */
  private void byTier(
      String name,
      String description,
      String unit,
      java.util.function.Supplier<Map<String, Double>> values) {
    io.micrometer.core.instrument.MultiGauge gauge =
        io.micrometer.core.instrument.MultiGauge.builder(name)
            .description(description)
            .baseUnit(unit)
            .register(registry);
    beforeScrape.add(
        () ->
            gauge.register(
                values.get().entrySet().stream()
                    .map(
                        e ->
                            io.micrometer.core.instrument.MultiGauge.Row.of(
                                io.micrometer.core.instrument.Tags.of("tier", e.getKey()),
                                e.getValue()))
                    .toList(),
                true));
  }

  /** Brings the gauges read per scrape up to date; call just before rendering the registry. */
  public void beforeScrape() {
    beforeScrape.forEach(Runnable::run);
  }

  /** One counter per metric and tag value, registered on first use. */
  private void count(String metric, String description, String tag, String value) {
    counters
        .computeIfAbsent(
            metric + "|" + value,
            k ->
                Counter.builder(metric).description(description).tag(tag, value).register(registry))
        .increment();
  }
}
