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
  public final FakeSlurmClient client =
      new FakeSlurmClient(Clock.systemUTC(), "gpu-node-0", "gpu-node-1");
  public final SlurmStateCache cache =
      new SlurmStateCache(
          client,
          io.kse.slurm.StateCadence.everyPass(Duration.ofSeconds(1), Duration.ZERO),
          Clock.systemUTC(),
          new SimpleMeterRegistry());
}
