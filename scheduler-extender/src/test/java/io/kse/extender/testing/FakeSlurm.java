package io.kse.extender.testing;

import io.kse.slurm.cache.SlurmStateCache;
import io.kse.slurm.testing.FakeSlurmClient;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Clock;
import java.time.Duration;

/**
 * An in-memory Slurm with two GPU nodes and a cache over it, polled by hand with pollOnce; each
 * pass lists the whole job table, so a test may change the fake behind the cache's back (the
 * production cadence is SlurmStateCacheTest's).
 */
public final class FakeSlurm {
  public final FakeSlurmClient client;
  public final SlurmStateCache cache;

  public FakeSlurm() {
    this(Clock.systemUTC());
  }

  /** Slurm's stamps and the cache's reads on {@code clock}: a test's clock moves all three. */
  public FakeSlurm(Clock clock) {
    client = new FakeSlurmClient(clock, "gpu-node-0", "gpu-node-1");
    cache =
        new SlurmStateCache(
            client,
            io.kse.slurm.StateCadence.everyPass(Duration.ofSeconds(1), Duration.ZERO),
            clock,
            new SimpleMeterRegistry());
  }
}
