package io.kse.slurm.cache;

import io.kse.slurm.SlurmJob;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * "Slurm just allocated job N" (Slurm's PrologSlurmctld, manifests/slurm/kse-allocation-hint): the
 * cache polls now instead of at its next tick. The hint is not trusted — it only makes the cache
 * look sooner, through slurmrestd as always — and costs at most {@link #FOLLOW_UPS}' size plus one
 * polls, folded together with every other hint (SlurmStateCache#pollSoon).
 *
 * <p>Slurm runs PrologSlurmctld while the job is still CONFIGURING, so the first look may be too
 * early: until the cache holds the job with its nodes (or ended), it looks again after each of
 * {@link #FOLLOW_UPS}.
 */
public final class AllocationHints implements AutoCloseable {
  static final List<Duration> FOLLOW_UPS =
      List.of(Duration.ofMillis(30), Duration.ofMillis(100), Duration.ofMillis(300));

  private final SlurmStateCache cache;
  private final Duration minGap;
  private final ScheduledExecutorService timer;
  private final Counter hinted;

  public AllocationHints(SlurmStateCache cache, Duration minGap, MeterRegistry registry) {
    this.cache = cache;
    this.minGap = minGap;
    this.hinted =
        Counter.builder("kse.slurm.hinted.polls")
            .description("Polls of Slurm asked for by allocation hints, besides the regular ones")
            .register(registry);
    this.timer =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "kse-allocation-hints");
              t.setDaemon(true);
              return t;
            });
  }

  /** Slurm says it allocated {@code jobId}: look now, and again until the cache sees it. */
  public void allocated(long jobId) {
    if (settled(jobId)) {
      return; // a regular poll was faster
    }
    poll();
    long at = 0;
    for (Duration d : FOLLOW_UPS) {
      at += d.toMillis();
      try {
        timer.schedule(
            () -> {
              if (!settled(jobId)) {
                poll();
              }
            },
            at,
            TimeUnit.MILLISECONDS);
      } catch (RejectedExecutionException e) {
        return; // closed
      }
    }
  }

  private void poll() {
    hinted.increment();
    cache.pollSoon(minGap);
  }

  /** The cache holds the job with its nodes, or saw it end: nothing more to look for. */
  private boolean settled(long jobId) {
    Optional<SlurmJob> j = cache.job(jobId);
    return j.map(x -> x.state().holdsNodes() || x.state().isFinal()).orElse(false);
  }

  @Override
  public void close() {
    timer.shutdownNow();
  }
}
