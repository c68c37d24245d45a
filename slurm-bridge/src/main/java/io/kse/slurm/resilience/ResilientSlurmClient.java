package io.kse.slurm.resilience;

import io.github.resilience4j.bulkhead.Bulkhead;
import io.github.resilience4j.bulkhead.BulkheadConfig;
import io.github.resilience4j.bulkhead.BulkheadFullException;
import io.github.resilience4j.circuitbreaker.CallNotPermittedException;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.github.resilience4j.core.IntervalFunction;
import io.github.resilience4j.retry.Retry;
import io.github.resilience4j.retry.RetryConfig;
import io.kse.slurm.ApiVersion;
import io.kse.slurm.JobListing;
import io.kse.slurm.JobSubmission;
import io.kse.slurm.JobUpdate;
import io.kse.slurm.SlurmClient;
import io.kse.slurm.SlurmConfig;
import io.kse.slurm.SlurmException;
import io.kse.slurm.SlurmJob;
import io.kse.slurm.SlurmNode;
import io.kse.slurm.SlurmNotFoundException;
import io.kse.slurm.SlurmRejectedException;
import io.kse.slurm.SlurmUnauthorizedException;
import io.kse.slurm.SlurmUnavailableException;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * Wraps a {@link SlurmClient} with the protections every caller needs: a bounded number of calls in
 * flight, a circuit breaker that opens when Slurm is unavailable (only unavailability counts: a
 * rejected request says nothing about Slurm's health), retries with exponential backoff for
 * idempotent calls only, and a latency timer per operation and outcome.
 */
public final class ResilientSlurmClient implements SlurmClient {
  /** Micrometer name; Prometheus: {@code kse_slurm_request_duration_seconds}. */
  public static final String REQUEST_TIMER = io.kse.slurm.MetricNames.REQUEST;

  /**
   * Micrometer name; Prometheus: {@code kse_slurm_circuit_state} (0 closed, 1 open, 2 half-open).
   */
  public static final String CIRCUIT_GAUGE = io.kse.slurm.MetricNames.CIRCUIT;

  private final SlurmClient delegate;
  private final CircuitBreaker circuit;
  private final Bulkhead bulkhead;
  private final Retry retry;
  private final MeterRegistry registry;
  private final int maxInFlight;

  public ResilientSlurmClient(SlurmClient delegate, SlurmConfig config, MeterRegistry registry) {
    this.delegate = delegate;
    this.registry = registry;
    this.maxInFlight = config.maxInFlight();
    this.circuit =
        CircuitBreaker.of(
            "slurm",
            CircuitBreakerConfig.custom()
                .slidingWindowSize(10)
                .minimumNumberOfCalls(5)
                .failureRateThreshold(50)
                .waitDurationInOpenState(config.circuitOpenFor())
                .permittedNumberOfCallsInHalfOpenState(2)
                .recordException(e -> e instanceof SlurmUnavailableException)
                .build());
    this.bulkhead =
        Bulkhead.of(
            "slurm",
            BulkheadConfig.custom()
                .maxConcurrentCalls(config.maxInFlight())
                .maxWaitDuration(Duration.ofMillis(50))
                .build());
    this.retry =
        Retry.of(
            "slurm",
            RetryConfig.custom()
                .maxAttempts(config.retryAttempts())
                .intervalFunction(IntervalFunction.ofExponentialBackoff(config.retryBackoff(), 2.0))
                // an open circuit or a full bulkhead will not heal in milliseconds
                .retryOnException(
                    e ->
                        e instanceof SlurmUnavailableException
                            && !(e.getCause() instanceof CallNotPermittedException)
                            && !(e.getCause() instanceof BulkheadFullException))
                .build());
    Gauge.builder(CIRCUIT_GAUGE, circuit, c -> circuitValue(c.getState()))
        .description("Slurm circuit breaker: 0 closed, 1 open, 2 half-open")
        .register(registry);
  }

  private static int circuitValue(CircuitBreaker.State s) {
    return switch (s) {
      case CLOSED, DISABLED, METRICS_ONLY -> 0;
      case OPEN, FORCED_OPEN -> 1;
      case HALF_OPEN -> 2;
    };
  }

  /** The circuit breaker's state, for health endpoints. */
  public CircuitBreaker.State circuitState() {
    return circuit.getState();
  }

  @Override
  public ApiVersion apiVersion() {
    return delegate.apiVersion();
  }

  @Override
  public long submit(JobSubmission job) {
    return call("submit", false, () -> delegate.submit(job));
  }

  @Override
  public Optional<SlurmJob> job(long jobId) {
    return call("get_job", true, () -> delegate.job(jobId));
  }

  @Override
  public JobListing jobsChangedSince(Instant since) {
    return call("list_jobs", true, () -> delegate.jobsChangedSince(since));
  }

  @Override
  public List<SlurmJob> allJobs(java.util.function.Predicate<SlurmJob> keep) {
    return call("list_jobs", true, () -> delegate.allJobs(keep));
  }

  @Override
  public java.util.Map<Long, io.kse.slurm.JobState> jobStates(java.util.Collection<Long> ids) {
    return call("job_states", true, () -> delegate.jobStates(ids));
  }

  @Override
  public Optional<java.util.Map<Long, io.kse.slurm.JobState>> allJobStates() {
    return call("all_job_states", true, delegate::allJobStates);
  }

  @Override
  public io.kse.slurm.NodeListing nodesChangedSince(Instant since) {
    return call("list_nodes", true, () -> delegate.nodesChangedSince(since));
  }

  @Override
  public void cancel(long jobId) {
    run("cancel", () -> delegate.cancel(jobId));
  }

  @Override
  public void update(long jobId, JobUpdate update) {
    run("update_job", () -> delegate.update(jobId, update));
  }

  @Override
  public List<SlurmNode> nodes() {
    return call("list_nodes", true, delegate::nodes);
  }

  @Override
  public Optional<SlurmNode> node(String name) {
    return call("get_node", true, () -> delegate.node(name));
  }

  @Override
  public List<io.kse.slurm.SlurmPartition> partitions() {
    return call("list_partitions", true, delegate::partitions);
  }

  @Override
  public List<io.kse.slurm.SlurmQos> qos() {
    return call("list_qos", true, delegate::qos);
  }

  @Override
  public void drain(String node, String reason) {
    run("drain_node", () -> delegate.drain(node, reason));
  }

  @Override
  public void resume(String node) {
    run("resume_node", () -> delegate.resume(node));
  }

  @Override
  public void ping() {
    run("ping", delegate::ping);
  }

  @Override
  public java.util.Optional<io.kse.slurm.SlurmRelease> release() {
    return call("release", true, delegate::release);
  }

  @Override
  public void close() {
    delegate.close();
  }

  /** For idempotent calls without a result (cancel, update, drain, resume, ping). */
  private void run(String operation, Runnable action) {
    call(
        operation,
        true,
        () -> {
          action.run();
          return null;
        });
  }

  private <T> T call(String operation, boolean idempotent, Supplier<T> action) {
    Supplier<T> guarded =
        () -> {
          try {
            return CircuitBreaker.decorateSupplier(
                    circuit, Bulkhead.decorateSupplier(bulkhead, action))
                .get();
          } catch (CallNotPermittedException e) {
            throw new io.kse.slurm.SlurmCallNotSentException(
                operation
                    + " not sent: the Slurm circuit breaker is open after repeated"
                    + " unavailability; calls fail fast until it half-opens",
                e);
          } catch (BulkheadFullException e) {
            throw new io.kse.slurm.SlurmCallNotSentException(
                operation + " not sent: " + maxInFlight + " Slurm calls are already in flight", e);
          }
        };
    Supplier<T> attempt = idempotent ? Retry.decorateSupplier(retry, guarded) : guarded;
    long start = System.nanoTime();
    String outcome = "ok";
    try {
      return attempt.get();
    } catch (SlurmException e) {
      outcome = outcome(e);
      throw e;
    } finally {
      timer(operation, outcome).record(Duration.ofNanos(System.nanoTime() - start));
    }
  }

  private static String outcome(SlurmException e) {
    if (e instanceof SlurmNotFoundException) {
      return "not_found";
    } else if (e instanceof SlurmRejectedException) {
      return "rejected";
    } else if (e instanceof SlurmUnauthorizedException) {
      return "unauthorized";
    }
    return "unavailable";
  }

  /** Built once per (operation, outcome), not per call: every request records into one. */
  private final java.util.Map<String, Timer> timers =
      new java.util.concurrent.ConcurrentHashMap<>();

  private Timer timer(String operation, String outcome) {
    // the version may change under a running extender (RenegotiatingSlurmClient)
    return timers.computeIfAbsent(
        operation + "|" + outcome + "|" + delegate.apiVersion().id(),
        k -> newTimer(operation, outcome));
  }

  private Timer newTimer(String operation, String outcome) {
    return Timer.builder(REQUEST_TIMER)
        .description("Slurm REST calls, including retries")
        .tag("operation", operation)
        .tag("api_version", delegate.apiVersion().id())
        .tag("outcome", outcome)
        .serviceLevelObjectives(io.kse.slurm.MetricNames.callBuckets())
        .register(registry);
  }
}
