package io.kse.slurm.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kse.slurm.JobState;
import io.kse.slurm.JobSubmission;
import io.kse.slurm.SlurmClient;
import io.kse.slurm.SlurmJob;
import io.kse.slurm.cache.SlurmStateCache;
import io.kse.slurm.testing.LocalSlurmCluster;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Every node busy with a training job, then an inference placeholder that only fits by preempting
 * one. Checks Slurm's result and how late the cache saw each transition compared with a watcher
 * polling slurmrestd every 25 ms.
 */
final class PreemptionScenario {
  static final Duration POLL = Duration.ofMillis(500);

  /** One poll interval, plus what one poll itself may take on a loaded CI machine. */
  static final Duration ONE_POLL = POLL.plusMillis(700);

  record Result(SlurmJob placeholder, SlurmJob victim, long placeholderLagMs, long victimLagMs) {}

  private PreemptionScenario() {}

  /** Fills every node with one exclusive training job submitted by sbatch; returns the ids. */
  static List<Long> fillWithTraining(
      LocalSlurmCluster cluster, SlurmClient slurm, String... extraArgs) {
    List<Long> ids = cluster.submitTrainingOnEveryNode(extraArgs);
    await()
        .atMost(Duration.ofSeconds(20))
        .pollInterval(Duration.ofMillis(100))
        .until(
            () ->
                ids.stream()
                    .allMatch(id -> slurm.job(id).map(SlurmJob::isAllocated).orElse(false)));
    return ids;
  }

  static Result preemptOne(SlurmClient slurm, List<Long> training, JobSubmission placeholder) {
    AtomicLong restSawStart = new AtomicLong();
    AtomicLong restSawVictim = new AtomicLong();
    AtomicLong cacheSawStart = new AtomicLong();
    AtomicLong cacheSawVictim = new AtomicLong();
    AtomicLong placeholderId = new AtomicLong(-1);
    try (SlurmStateCache cache =
        new SlurmStateCache(
            slurm,
            io.kse.slurm.StateCadence.of(
                POLL, Duration.ofSeconds(5), Duration.ofSeconds(10), Duration.ofMinutes(5), 32),
            Clock.systemUTC(),
            new SimpleMeterRegistry())) {
      java.util.concurrent.atomic.AtomicReference<SlurmJob> victimSeen =
          new java.util.concurrent.atomic.AtomicReference<>();
      cache.addJobListener(
          c -> {
            long now = System.nanoTime();
            if (c.jobId() == placeholderId.get() && c.started()) {
              cacheSawStart.compareAndSet(0, now);
            }
            if (training.contains(c.jobId())
                && c.after().map(PreemptionScenario::preempted).orElse(false)) {
              // other users' jobs are reported, not kept: the change carries the victim
              victimSeen.compareAndSet(null, c.after().get());
              cacheSawVictim.compareAndSet(0, now);
            }
          });
      cache.start();
      await().atMost(Duration.ofSeconds(10)).until(cache::synced);

      AtomicBoolean watching = new AtomicBoolean(true);
      java.util.Map<Long, java.util.List<String>> ranOn =
          new java.util.concurrent.ConcurrentHashMap<>();
      Thread watcher =
          new Thread(
              () -> {
                while (watching.get()) {
                  long now = System.nanoTime();
                  for (SlurmJob j : slurm.jobsChangedSince(java.time.Instant.EPOCH).jobs()) {
                    if (j.id() == placeholderId.get() && j.isAllocated()) {
                      restSawStart.compareAndSet(0, now);
                    }
                    if (training.contains(j.id()) && j.isAllocated()) {
                      ranOn.put(j.id(), j.nodes());
                    }
                    if (training.contains(j.id())
                        && preempted(j)
                        && restSawVictim.compareAndSet(0, now)) {
                      // what Slurm's EpilogSlurmctld hook tells the extender (SlurmHooksIT runs
                      // the real hook): this job ended, on these nodes
                      cache.endedElsewhere(j.id(), ranOn.getOrDefault(j.id(), j.nodes()));
                    }
                  }
                  sleep(25);
                }
              },
              "rest-watcher");
      watcher.start();
      long submitted = System.nanoTime();
      placeholderId.set(cache.tracking(slurm).submit(placeholder));
      try {
        await()
            .atMost(Duration.ofSeconds(20))
            .pollInterval(Duration.ofMillis(20))
            .until(() -> cacheSawStart.get() != 0 && cacheSawVictim.get() != 0);
      } finally {
        watching.set(false);
        join(watcher);
      }
      SlurmJob p = cache.job(placeholderId.get()).orElseThrow();
      SlurmJob victim = victimSeen.get();
      System.out.printf(
          "[measure] %s: submit -> placeholder RUNNING (REST) %d ms; cache lag after REST:"
              + " placeholder start %d ms, victim requeue %d ms (poll interval %d ms)%n",
          placeholder
              .qos()
              .map(q -> "qos " + q)
              .orElse("partition " + placeholder.partition().orElse("?")),
          (restSawStart.get() - submitted) / 1_000_000,
          (cacheSawStart.get() - restSawStart.get()) / 1_000_000,
          (cacheSawVictim.get() - restSawVictim.get()) / 1_000_000,
          POLL.toMillis());
      return new Result(
          p,
          victim,
          (cacheSawStart.get() - restSawStart.get()) / 1_000_000,
          (cacheSawVictim.get() - restSawVictim.get()) / 1_000_000);
    }
  }

  /** Preempted with REQUEUE: back to pending, restart count up (or PREEMPTED in CANCEL mode). */
  static boolean preempted(SlurmJob j) {
    return j.state() == JobState.PREEMPTED || j.state() == JobState.PENDING && j.restartCount() > 0;
  }

  static void assertSeenWithinOnePoll(Result r) {
    assertThat(r.placeholderLagMs())
        .as("cache lag for the placeholder start")
        .isLessThanOrEqualTo(ONE_POLL.toMillis());
    assertThat(r.victimLagMs())
        .as("cache lag for the victim's requeue")
        .isLessThanOrEqualTo(ONE_POLL.toMillis());
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static void join(Thread t) {
    try {
      t.join(5000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
