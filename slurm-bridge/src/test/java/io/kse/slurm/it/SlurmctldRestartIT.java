package io.kse.slurm.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.kse.slurm.SlurmClient;
import io.kse.slurm.SlurmClients;
import io.kse.slurm.SlurmJob;
import io.kse.slurm.SlurmUnavailableException;
import io.kse.slurm.cache.JobChange;
import io.kse.slurm.cache.SlurmStateCache;
import io.kse.slurm.testing.LocalSlurmCluster;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * While slurmctld is down, slurmrestd answers a job query with error -1 "Unable to find JobId"
 * after its own retries: that must read as "unavailable", never as "the job is gone", and the cache
 * must keep the job through the restart.
 */
class SlurmctldRestartIT {
  final LocalSlurmCluster cluster = LocalSlurmCluster.shared(LocalSlurmCluster.Mode.PARTITION);

  @AfterEach
  void restore() {
    cluster.startController();
    cluster.cancelAll();
  }

  @Test
  void aJobIsNeverReportedGoneWhileSlurmctldRestarts() {
    SlurmClient slurm =
        SlurmClients.connect(
            cluster
                .config()
                .withApiVersion(io.kse.slurm.testing.LocalSlurmCluster.expectedApiVersion())
                .withTimeouts(Duration.ofSeconds(1), Duration.ofSeconds(3)),
            new SimpleMeterRegistry());
    long id = slurm.submit(cluster.placeholder("survivor").gresPerNode("gpu:h100:1").build());
    await()
        .atMost(Duration.ofSeconds(15))
        .until(() -> slurm.job(id).map(SlurmJob::isAllocated).orElse(false));

    List<JobChange> changes = new CopyOnWriteArrayList<>();
    try (SlurmStateCache cache =
        new SlurmStateCache(
            slurm,
            Duration.ofMillis(500),
            Duration.ofSeconds(30),
            Clock.systemUTC(),
            new SimpleMeterRegistry())) {
      cache.addJobListener(changes::add);
      cache.pollOnce();
      changes.clear();

      cluster.stopController();
      assertThatThrownBy(() -> slurm.job(id)).isInstanceOf(SlurmUnavailableException.class);
      assertThatThrownBy(cache::pollOnce).isInstanceOf(SlurmUnavailableException.class);
      assertThat(cache.job(id)).as("kept while slurmctld is down").isPresent();

      cluster.startController();
      await().atMost(Duration.ofSeconds(30)).ignoreExceptions().untilAsserted(cache::pollOnce);
      cache.pollOnce();
      assertThat(cache.job(id)).get().extracting(SlurmJob::isAllocated).isEqualTo(true);
      assertThat(changes).noneMatch(c -> c.after().isEmpty());
    }
  }
}
