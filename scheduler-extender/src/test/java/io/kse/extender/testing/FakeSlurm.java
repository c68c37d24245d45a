package io.kse.extender.testing;

import io.kse.slurm.cache.SlurmStateCache;
import io.kse.slurm.testing.FakeSlurmClient;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Clock;
import java.time.Duration;

/** An in-memory Slurm with two GPU nodes and a cache over it (polled by hand with pollOnce). */
public final class FakeSlurm {
  public final FakeSlurmClient client =
      new FakeSlurmClient(Clock.systemUTC(), "gpu-node-0", "gpu-node-1");
  public final SlurmStateCache cache =
      new SlurmStateCache(
          client,
          Duration.ofSeconds(1),
          Duration.ofSeconds(30),
          Clock.systemUTC(),
          new SimpleMeterRegistry());
}
