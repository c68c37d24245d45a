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

  /** Malformed requests: {@code kse_bad_requests_total{verb}}. */
  public void badRequest(String verb) {
    counters
        .computeIfAbsent(
            "bad|" + verb,
            k ->
                Counter.builder("kse.bad.requests")
                    .description("Requests answered with HTTP 400")
                    .tag("verb", verb)
                    .register(registry))
        .increment();
  }
}
