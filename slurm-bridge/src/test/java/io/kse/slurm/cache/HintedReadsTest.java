package io.kse.slurm.cache;

import static org.assertj.core.api.Assertions.assertThat;

import io.kse.slurm.ForwardingSlurmClient;
import io.kse.slurm.JobSubmission;
import io.kse.slurm.PlaceholderTag;
import io.kse.slurm.SlurmClient;
import io.kse.slurm.SlurmJob;
import io.kse.slurm.SlurmRejectedException;
import io.kse.slurm.StateCadence;
import io.kse.slurm.testing.FakeSlurmClient;
import io.kse.slurm.testing.MutableClock;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Issue 43: names from hints that Slurm does not have, or cannot even read, must cost bounded reads
 * and never fail, delay or age a pass. Before, a hinted read held the pass lock for its whole Slurm
 * call: 9 impossible ids made the cache stale for 13.5 s, 10,000 unknown ones for 12.6 s.
 */
class HintedReadsTest {
  private static final Duration PASS = Duration.ofMillis(500);
  private static final long JUNK = 1_000_000_000L; // ids from here on: Slurm refuses to read them

  private final MutableClock clock = new MutableClock();
  private final FakeSlurmClient fake = new FakeSlurmClient(clock, "gpu-node-0", "gpu-node-1");
  private final AtomicInteger refused = new AtomicInteger();
  private volatile CountDownLatch holdReads = new CountDownLatch(0);
  private final CountDownLatch readHeld = new CountDownLatch(1);
  private volatile long slowJob = -1;
  private final CountDownLatch holdSlow = new CountDownLatch(1);
  private volatile CountDownLatch slowHeld = new CountDownLatch(1);
  private final java.util.Set<Long> burst = java.util.concurrent.ConcurrentHashMap.newKeySet();
  private volatile long nextSlowJob = -1;
  private final CountDownLatch holdNext = new CountDownLatch(1);
  private final CountDownLatch nextHeld = new CountDownLatch(1);

  private final SlurmClient slurm =
      new ForwardingSlurmClient() {
        @Override
        protected SlurmClient delegate() {
          return fake;
        }

        @Override
        public Optional<SlurmJob> job(long jobId) {
          if (jobId == slowJob || burst.contains(jobId)) {
            slowHeld.countDown();
            await(holdSlow);
          }
          if (jobId == nextSlowJob) {
            nextHeld.countDown();
            await(holdNext);
          }
          if (jobId >= JUNK) {
            readHeld.countDown();
            await(holdReads);
            refused.incrementAndGet();
            throw new SlurmRejectedException("get job " + jobId + " failed: HTTP 500 (-1)");
          }
          return fake.job(jobId);
        }
      };

  private final SlurmStateCache cache =
      new SlurmStateCache(
          slurm,
          StateCadence.of(
              PASS, Duration.ofSeconds(5), Duration.ofSeconds(10), Duration.ofMinutes(5), 32),
          clock,
          new SimpleMeterRegistry());
  private final SlurmClient ours = cache.tracking(slurm);

  /** A placeholder of ours for pod {@code name} (its uid the same), submitted through the cache. */
  private long submit(String name) {
    return ours.submit(JobSubmission.builder(new PlaceholderTag("ns", name, name)).build());
  }

  private void pass() {
    clock.advance(PASS);
    cache.pollOnce();
  }

  @Test
  void aHintedReadThatHangsDoesNotHoldThePass() throws Exception {
    cache.pollOnce(); // synced
    holdReads = new CountDownLatch(1);
    CompletableFuture<Void> hinted = CompletableFuture.runAsync(() -> cache.refreshJob(JUNK + 1));
    assertThat(readHeld.await(10, TimeUnit.SECONDS)).isTrue();
    long id = ours.submit(JobSubmission.builder(new PlaceholderTag("ns", "pod-a", "a")).build());
    CompletableFuture<Void> passed = CompletableFuture.runAsync(this::pass);
    try {
      passed.get(10, TimeUnit.SECONDS); // hung behind the hinted read's lock before
      assertThat(cache.job(id)).as("our job read while the hinted read hangs").isPresent();
      assertThat(cache.age()).isZero();
    } finally {
      holdReads.countDown();
    }
    hinted.get(10, TimeUnit.SECONDS);
  }

  /**
   * Issue 47: a hint's read waited for the pass under way to publish, and in a burst a pass on
   * 22.05 lasts seconds: the one hints thread queued behind it, and started placeholders were seen
   * 6 s late. Now the hint's read returns at once and the pass publishes it with its own.
   */
  @Test
  void aHintsReadNeverWaitsForThePassUnderWayWhichPublishesIt() throws Exception {
    pass(); // synced
    long started = submit("b");
    pass(); // seen pending
    long slow = submit("a");
    cache.allocationHinted(slow); // the hooks deliver: the pending one is not read every pass
    slowJob = slow;
    clock.advance(PASS);
    CompletableFuture<Void> passed = CompletableFuture.runAsync(cache::pollOnce);
    try {
      assertThat(slowHeld.await(10, TimeUnit.SECONDS)).as("the pass is under way").isTrue();
      fake.allocate(started, java.util.List.of("gpu-node-1"));
      CompletableFuture.runAsync(() -> cache.refreshJob(started)).get(5, TimeUnit.SECONDS);
      assertThat(passed).as("the pass is still under way").isNotDone();
    } finally {
      holdSlow.countDown();
    }
    passed.get(10, TimeUnit.SECONDS);
    assertThat(cache.job(started))
        .as("published with the pass")
        .get()
        .matches(j -> j.nodes().equals(java.util.List.of("gpu-node-1")));
  }

  /**
   * Issue 47: in a 64-pod burst on 22.05 a pass read the new jobs one by one for a second, and the
   * hints' reads of 52 started placeholders waited for its end to be published together. The pass
   * now publishes them between its own reads, and its end keeps them.
   */
  @Test
  void aPassUnderWayPublishesAHintsReadBetweenItsOwnReads() throws Exception {
    pass(); // synced
    long started = submit("b");
    pass(); // seen pending
    long first = submit("a");
    long next = submit("c");
    cache.allocationHinted(first); // the hooks deliver: the pending one is not read every pass
    java.util.List<JobChange> toldOfStarted = new java.util.concurrent.CopyOnWriteArrayList<>();
    cache.addJobListener(
        c -> {
          if (c.after().map(j -> j.id() == started).orElse(false)) {
            toldOfStarted.add(c);
          }
        });
    slowJob = first;
    nextSlowJob = next;
    clock.advance(PASS);
    CompletableFuture<Void> passed = CompletableFuture.runAsync(cache::pollOnce);
    try {
      assertThat(slowHeld.await(10, TimeUnit.SECONDS)).as("the pass reads its first job").isTrue();
      fake.allocate(started, java.util.List.of("gpu-node-1"));
      CompletableFuture.runAsync(() -> cache.refreshJob(started)).get(5, TimeUnit.SECONDS);
      holdSlow.countDown();
      assertThat(nextHeld.await(10, TimeUnit.SECONDS)).as("the pass reads its next job").isTrue();
      assertThat(passed).as("the pass is still under way").isNotDone();
      assertThat(cache.job(started))
          .as("published between the pass's reads")
          .get()
          .matches(j -> j.nodes().equals(java.util.List.of("gpu-node-1")));
      assertThat(cache.job(first)).as("with what the pass read so far").isPresent();
    } finally {
      holdSlow.countDown();
      holdNext.countDown();
    }
    passed.get(10, TimeUnit.SECONDS);
    assertThat(cache.job(started))
        .as("the pass's end keeps it")
        .get()
        .matches(j -> j.nodes().equals(java.util.List.of("gpu-node-1")));
    assertThat(cache.job(next)).isPresent();
    assertThat(toldOfStarted).as("its start told once, not again at the pass's end").hasSize(1);
  }

  /** Issue 47: a burst's hints are read several at once, not each behind the one before. */
  @Test
  void aBurstsHintsAreReadSeveralAtOnce() throws Exception {
    pass();
    slowHeld = new CountDownLatch(4); // one at a time before
    try (AllocationHints hints =
        new AllocationHints(cache, Duration.ZERO, new SimpleMeterRegistry())) {
      for (int i = 0; i < 8; i++) {
        long id =
            ours.submit(JobSubmission.builder(new PlaceholderTag("ns", "p" + i, "u" + i)).build());
        burst.add(id);
        hints.allocated(id);
      }
      assertThat(slowHeld.await(10, TimeUnit.SECONDS)).as("four reads under way at once").isTrue();
    } finally {
      holdSlow.countDown();
    }
  }

  @Test
  void thousandsOfNamesSlurmCannotReadNeverFailOrAgeAPassAndAreDismissed() {
    cache.pollOnce();
    for (long n = 0; n < 5000; n++) {
      cache.allocationHinted(JUNK + n);
      cache.refreshJob(JUNK + n); // the hint's own look: refused, left to the passes
    }
    long id = ours.submit(JobSubmission.builder(new PlaceholderTag("ns", "pod-a", "a")).build());
    int before = refused.get();
    pass();
    assertThat(cache.lastError()).as("a refused read fails no pass").isEmpty();
    assertThat(cache.age()).isZero();
    assertThat(cache.job(id)).as("our own job is read first").isPresent();
    assertThat(refused.get() - before).isEqualTo(PassPlan.MAX_HINTED_READS);
    for (int i = 0; i < 2 * OurJobs.MAX_HINTED / PassPlan.MAX_HINTED_READS; i++) {
      pass();
      assertThat(cache.lastError()).isEmpty();
      assertThat(cache.age()).isZero();
    }
    assertThat(cache.lookingFor(JUNK)).as("twice not there: dismissed").isFalse();
    assertThat(cache.dismissed(JUNK)).isTrue();
    int settled = refused.get();
    for (int i = 0; i < 20; i++) {
      pass();
    }
    assertThat(refused.get()).as("nothing read again").isEqualTo(settled);
    assertThat(settled - before)
        .as("each name taken read twice by the passes, the flood past the bound not at all")
        .isEqualTo(2 * OurJobs.MAX_HINTED);
  }

  /** Seen once against Slurm 25.11: synced() true while the snapshot still had no node. */
  @Test
  void syncedOnlyOnceTheListingsAreInTheSnapshot() throws Exception {
    for (int i = 0; i < 2000; i++) {
      fake.submit(JobSubmission.builder(new PlaceholderTag("ns", "p" + i, "u" + i)).build());
    }
    for (int round = 0; round < 20; round++) {
      SlurmStateCache fresh =
          new SlurmStateCache(
              slurm,
              Duration.ofMillis(500),
              Duration.ofSeconds(30),
              clock,
              new SimpleMeterRegistry());
      AtomicInteger seenEarly = new AtomicInteger();
      CountDownLatch done = new CountDownLatch(1);
      Thread reader =
          new Thread(
              () -> {
                while (done.getCount() > 0) {
                  Snapshot s = fresh.snapshot();
                  if (fresh.synced() && fresh.snapshot().nodes().isEmpty() && s.nodes().isEmpty()) {
                    seenEarly.incrementAndGet();
                  }
                }
              });
      reader.start();
      fresh.pollOnce();
      done.countDown();
      reader.join();
      assertThat(seenEarly.get()).as("round " + round).isZero();
      assertThat(fresh.synced()).isTrue();
      assertThat(fresh.snapshot().nodes()).hasSize(2);
      assertThat(fresh.snapshot().jobs()).hasSize(2000);
    }
  }

  private static void await(CountDownLatch l) {
    try {
      l.await(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
