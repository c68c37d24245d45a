package io.kse.slurm.cache;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kse.slurm.JobState;
import io.kse.slurm.JobSubmission;
import io.kse.slurm.PlaceholderTag;
import io.kse.slurm.SlurmJob;
import io.kse.slurm.testing.FakeSlurmClient;
import io.kse.slurm.testing.MutableClock;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The cache never polls on its own here (not started): every poll is one a hint asked for. */
class AllocationHintsTest {
  private final MutableClock clock = new MutableClock();
  private final FakeSlurmClient slurm = new FakeSlurmClient(clock, "gpu-node-0");
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final SlurmStateCache cache =
      new SlurmStateCache(
          slurm,
          io.kse.slurm.StateCadence.of(
              Duration.ofHours(1),
              Duration.ofHours(1),
              Duration.ofHours(1),
              Duration.ofHours(1),
              32),
          clock,
          registry);
  private final AllocationHints hints = new AllocationHints(cache, Duration.ZERO, registry);

  @AfterEach
  void close() {
    hints.close();
    cache.close();
  }

  @Test
  void aHintMakesTheCacheSeeTheAllocationWithoutWaitingForItsPoll() {
    long id = slurm.submit(JobSubmission.builder(new PlaceholderTag("ns", "p", "u1")).build());
    cache.pollOnce();
    slurm.allocate(id, List.of("gpu-node-0"));
    clock.advance(Duration.ofSeconds(1));

    hints.allocated(id);

    await()
        .atMost(Duration.ofSeconds(5))
        .until(() -> cache.job(id).map(SlurmJob::state).orElse(null) == JobState.RUNNING);
  }

  /** Issue 28: EpilogSlurmctld's hint — the end is seen without waiting for a poll. */
  @Test
  void anEndHintMakesTheCacheSeeTheJobEndWithoutWaitingForItsPoll() {
    long id = slurm.submit(JobSubmission.builder(new PlaceholderTag("ns", "p", "u1")).build());
    slurm.allocate(id, List.of("gpu-node-0"));
    cache.pollOnce();
    List<JobChange> seen = new java.util.concurrent.CopyOnWriteArrayList<>();
    cache.addJobListener(seen::add);
    slurm.end(id, JobState.CANCELLED);
    clock.advance(Duration.ofSeconds(1));
    hints.allocated(id);
    assertThat(seen).as("a start hint for a running job looks no more").isEmpty();

    hints.ended(id, List.of("gpu-node-0"));

    await()
        .atMost(Duration.ofSeconds(5))
        .until(() -> cache.job(id).map(SlurmJob::state).orElse(null) == JobState.CANCELLED);
    assertThat(seen)
        .singleElement()
        .satisfies(c -> assertThat(c.after().orElseThrow().state().isFinal()).isTrue());
  }

  /**
   * Issue 47: a placeholder seen COMPLETING has ended for the lifecycle (its node Epilog may hold
   * it for seconds, until the pod is gone), so the end hint's follow-ups do not read it again: in a
   * burst's teardown they did, three reads per pod.
   */
  @Test
  void anEndHintThatFindsTheJobCompletingReadsItOnce() {
    long id = slurm.submit(JobSubmission.builder(new PlaceholderTag("ns", "p", "u1")).build());
    slurm.allocate(id, List.of("gpu-node-0"));
    cache.pollOnce();
    slurm.end(id, JobState.COMPLETING);
    int before = slurm.jobCalls();

    hints.ended(id, List.of("gpu-node-0"));

    await()
        .atMost(Duration.ofSeconds(5))
        .until(() -> cache.job(id).map(SlurmJob::state).orElse(null) == JobState.COMPLETING);
    // the last follow-up was scheduled 430 ms after the hint: nothing after it
    await().during(Duration.ofMillis(600)).atMost(Duration.ofSeconds(2)).until(() -> true);
    assertThat(slurm.jobCalls() - before).isEqualTo(1);
  }

  @Test
  void aJobStillConfiguringAtTheFirstLookIsLookedForAgain() {
    long id = slurm.submit(JobSubmission.builder(new PlaceholderTag("ns", "p", "u1")).build());
    cache.pollOnce();
    // Slurm runs PrologSlurmctld before the job counts as running: the hint's first look is early
    hints.allocated(id);
    await()
        .atMost(Duration.ofSeconds(5))
        .pollInterval(Duration.ofMillis(5))
        .until(() -> slurm.jobCalls() >= 2); // the hint's look and its first follow-up
    slurm.allocate(id, List.of("gpu-node-0"));
    clock.advance(Duration.ofSeconds(1));

    await()
        .atMost(Duration.ofSeconds(5))
        .until(() -> cache.job(id).map(SlurmJob::state).orElse(null) == JobState.RUNNING);
  }

  /**
   * Issue 29 (a 60-minute soak on 26.05): the standby got the allocation hint of a job the writer
   * had submitted while slurmrestd was stopped; every look failed, and its checks knew nothing of
   * the job, so it answered kube-scheduler "not submitted" for 104 s after the writer woke the pod.
   * The hinted job is tracked now: the first check that reaches Slurm reads it.
   */
  @Test
  void aHintWhoseLooksAllFailIsFollowedByTheChecksOnceSlurmAnswers() {
    cache.pollOnce(); // listed before the other replica submitted: this cache has never heard of it
    long id = slurm.submit(JobSubmission.builder(new PlaceholderTag("ns", "p", "u1")).build());
    slurm.allocate(id, List.of("gpu-node-0"));
    slurm.failWith(FakeSlurmClient.outage());

    hints.allocated(id);
    int most = 1 + AllocationHints.FOLLOW_UPS.size();
    await()
        .atMost(Duration.ofSeconds(5))
        .until(() -> registry.counter("kse.slurm.hinted.polls").count() == most);
    assertThat(cache.job(id)).as("every look failed").isEmpty();
    slurm.failWith(null);
    int listings = slurm.listCalls();
    clock.advance(Duration.ofSeconds(1));

    cache.pollOnce();

    assertThat(cache.jobFor(new PlaceholderTag("ns", "p", "u1").key()))
        .map(SlurmJob::state)
        .as("the next check reads the hinted job")
        .contains(JobState.RUNNING);
    assertThat(slurm.listCalls()).as("without listing the job table").isEqualTo(listings);
  }

  @Test
  void aHintForAJobSlurmDoesNotHaveCostsABoundedNumberOfReads() {
    cache.pollOnce();
    int before = slurm.jobCalls();

    hints.allocated(424242);

    int most = 1 + AllocationHints.FOLLOW_UPS.size();
    await()
        .atMost(Duration.ofSeconds(5))
        .until(() -> registry.counter("kse.slurm.hinted.polls").count() == most);
    // the last follow-up was scheduled 430 ms after the hint: nothing after it
    await().during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(2)).until(() -> true);
    assertThat(slurm.jobCalls() - before).isEqualTo(most);
    assertThat(cache.job(424242)).isEmpty();

    // the checks look for it too, until Slurm has said twice it does not have it
    for (int i = 0; i < 4; i++) {
      clock.advance(Duration.ofSeconds(1));
      cache.pollOnce();
    }
    assertThat(slurm.jobCalls() - before).isEqualTo(most + 2);
    assertThat(cache.knows(424242)).isFalse();
  }

  @Test
  void aHintReadsThatOneJobNotTheWholeJobTable() {
    // issue 16: a poll in a burst returned slurmctld's whole job table (2-4 MB at 500-1,000 jobs),
    // and each allocation's hint asked for one
    long id = slurm.submit(JobSubmission.builder(new PlaceholderTag("ns", "p", "u1")).build());
    cache.pollOnce();
    int listings = slurm.listCalls();
    int reads = slurm.jobCalls();
    slurm.allocate(id, List.of("gpu-node-0"));
    List<JobState> seen = new java.util.concurrent.CopyOnWriteArrayList<>();
    cache.addJobListener(c -> c.after().ifPresent(j -> seen.add(j.state())));

    hints.allocated(id);

    await()
        .atMost(Duration.ofSeconds(5))
        .until(() -> cache.job(id).map(SlurmJob::state).orElse(null) == JobState.RUNNING);
    assertThat(cache.jobFor(new PlaceholderTag("ns", "p", "u1").key()))
        .map(SlurmJob::id)
        .as("found by its placeholder key too")
        .contains(id);
    assertThat(seen).as("listeners told, once").containsExactly(JobState.RUNNING);
    await().during(Duration.ofMillis(500)).atMost(Duration.ofSeconds(2)).until(() -> true);
    assertThat(slurm.listCalls()).as("no listing").isEqualTo(listings);
    assertThat(slurm.jobCalls() - reads).as("settled after the first read").isEqualTo(1);
  }

  @Test
  void aFloodOfHintsFoldsIntoFewPasses() {
    cache.pollOnce();
    long before = passes();

    for (int i = 0; i < 1000; i++) {
      cache.pollSoon(Duration.ofMillis(200));
    }

    await().atMost(Duration.ofSeconds(5)).until(() -> passes() > before);
    await().during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(2)).until(() -> true);
    assertThat(passes() - before).as("1,000 hints within one gap").isEqualTo(1);
    assertThat(slurm.listCalls()).as("a pass lists no job table").isEqualTo(1);
  }

  private long passes() {
    return registry.timer(io.kse.slurm.MetricNames.CACHE_POLL).count();
  }

  /**
   * A 60-minute soak's writer, restarted, got an allocation hint before its first listing: the read
   * it made reached the reconciler before the extender knew its cluster identity (an ERROR). Before
   * the first listing a hint now reads and publishes nothing: that listing reads every job.
   */
  @Test
  void aHintBeforeTheFirstListingPublishesNothing() throws Exception {
    long id = slurm.submit(JobSubmission.builder(new PlaceholderTag("ns", "p", "u1")).build());
    slurm.allocate(id, List.of("gpu-node-0"));
    List<JobChange> seen = new java.util.concurrent.CopyOnWriteArrayList<>();
    cache.addJobListener(seen::add);
    hints.allocated(id);
    cache.pollSoon(Duration.ZERO);
    Thread.sleep(300); // the hint's reads run on its timer: give them the chance to be wrong
    assertThat(seen).isEmpty();
    assertThat(cache.job(id)).isEmpty();

    cache.pollOnce();
    assertThat(cache.job(id)).as("the first listing finds it").isPresent();
  }
}
