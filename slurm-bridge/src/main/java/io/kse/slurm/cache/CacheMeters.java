package io.kse.slurm.cache;

import io.kse.slurm.MetricNames;
import io.kse.slurm.SlurmJob;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.time.Instant;
import java.util.function.IntSupplier;
import java.util.function.Supplier;

/** The state cache's meters: a pass's time, Slurm-to-cache lag, age, jobs kept, impostors seen. */
final class CacheMeters {
  private final Timer pass;
  private final Timer lag;
  private final Counter listings;
  private final Counter catchUps;

  CacheMeters(
      MeterRegistry registry, Supplier<Duration> age, IntSupplier jobs, IntSupplier impostors) {
    this.pass =
        Timer.builder(MetricNames.CACHE_POLL)
            .description("One pass of the Slurm state cache: checks, reads, listings due")
            .serviceLevelObjectives(
                Duration.ofMillis(5),
                Duration.ofMillis(20),
                Duration.ofMillis(50),
                Duration.ofMillis(100),
                Duration.ofMillis(250),
                Duration.ofSeconds(1))
            .register(registry);
    this.lag =
        Timer.builder(MetricNames.CACHE_VISIBLE_LAG)
            .description(
                "Slurm event time (start/end/submit, whole seconds) to the cache seeing it; an upper"
                    + " bound, since Slurm truncates its times to the second")
            .serviceLevelObjectives(
                Duration.ofMillis(250),
                Duration.ofMillis(500),
                Duration.ofSeconds(1),
                Duration.ofMillis(1500),
                Duration.ofSeconds(2),
                Duration.ofSeconds(5))
            .register(registry);
    this.listings = tableReads(registry, "listing");
    this.catchUps = tableReads(registry, "catch_up");
    Gauge.builder(MetricNames.CACHE_AGE, age, a -> a.get().toMillis() / 1000.0)
        .description("Seconds since the last successful pass over Slurm")
        .baseUnit("seconds")
        .strongReference(true)
        .register(registry);
    Gauge.builder(MetricNames.CACHE_JOBS, jobs, IntSupplier::getAsInt)
        .description("Placeholder jobs of ours in the Slurm cache")
        .strongReference(true)
        .register(registry);
    Gauge.builder(MetricNames.IMPOSTOR_JOBS, impostors, IntSupplier::getAsInt)
        .description(
            "Jobs whose comment carries this cluster's placeholder tag but that another Slurm user"
                + " submitted: ignored, never cancelled (counted at each full listing)")
        .strongReference(true)
        .register(registry);
  }

  private static Counter tableReads(MeterRegistry registry, String how) {
    return Counter.builder(MetricNames.JOB_TABLE_READS)
        .description(
            "Reads of slurmctld's whole job table that ended: listing (every job in full) or"
                + " catch_up (every job's state, the jobs made since read one by one)")
        .tag("how", how)
        .register(registry);
  }

  /** A read of the whole job table ended: a catch-up by difference, or a listing. */
  void tableRead(boolean caughtUp) {
    (caughtUp ? catchUps : listings).increment();
  }

  void recordPass(Duration took) {
    pass.record(took);
  }

  /** Slurm's own time of the job's latest event to now; jobs first seen long after are skipped. */
  void recordLag(SlurmJob j, Instant observed) {
    Instant event = j.endTime().or(j::startTime).orElse(j.submitTime());
    if (event.isAfter(Instant.EPOCH) && !event.isAfter(observed)) {
      Duration d = Duration.between(event, observed);
      if (d.compareTo(Duration.ofMinutes(1)) < 0) {
        lag.record(d);
      }
    }
  }
}
