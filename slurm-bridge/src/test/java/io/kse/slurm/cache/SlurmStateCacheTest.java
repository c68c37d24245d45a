package io.kse.slurm.cache;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kse.slurm.JobState;
import io.kse.slurm.JobSubmission;
import io.kse.slurm.PlaceholderTag;
import io.kse.slurm.SlurmJob;
import io.kse.slurm.SlurmUnavailableException;
import io.kse.slurm.testing.FakeSlurmClient;
import io.kse.slurm.testing.MutableClock;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class SlurmStateCacheTest {
  private final MutableClock clock = new MutableClock();
  private final FakeSlurmClient slurm = new FakeSlurmClient(clock, "gpu-node-0", "gpu-node-1");
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final SlurmStateCache cache =
      new SlurmStateCache(slurm, Duration.ofMillis(500), Duration.ofSeconds(30), clock, registry);
  private final List<JobChange> changes = new ArrayList<>();

  {
    cache.addJobListener(changes::add);
  }

  private long submit(String uid) {
    return slurm.submit(JobSubmission.builder(new PlaceholderTag("ns", "pod-" + uid, uid)).build());
  }

  @Test
  void findsPlaceholdersByPodUidAndReportsAllocation() {
    long id = submit("u1");
    cache.pollOnce();
    assertThat(cache.synced()).isTrue();
    assertThat(cache.jobFor("u1")).map(SlurmJob::state).contains(JobState.PENDING);
    slurm.allocate(id, List.of("gpu-node-1"));
    tick();
    cache.pollOnce();
    assertThat(cache.jobFor("u1")).map(SlurmJob::nodes).contains(List.of("gpu-node-1"));
    assertThat(changes).hasSize(2);
    assertThat(changes.get(0).isNew()).isTrue();
    assertThat(changes.get(1).started()).isTrue();
  }

  /**
   * Issue 47: what the extender does with the heap after a listing depends on how big the table
   * was, everyone's jobs counted — not how many of them are ours.
   */
  @Test
  void eachPublishedListingTellsHowManyJobsTheWholeTableHeld() {
    List<Integer> told = new ArrayList<>();
    cache.addListingListener(told::add);
    submit("u1");
    slurm.addForeignJob("training-a", JobState.RUNNING, List.of("gpu-node-0"));
    slurm.addForeignJob("training-b", JobState.PENDING, List.of());
    cache.pollOnce();
    assertThat(told).as("the start-up listing").containsExactly(3);
    tick();
    cache.pollOnce();
    assertThat(told).as("a pass without a listing tells nothing").containsExactly(3);
    slurm.addForeignJob("training-c", JobState.PENDING, List.of());
    slurm.failWith(new SlurmUnavailableException("slurmrestd down"));
    cache.resyncSoon();
    tick();
    assertThatThrownBy(cache::pollOnce).isInstanceOf(SlurmUnavailableException.class);
    assertThat(told).as("a listing that failed tells nothing").containsExactly(3);
    slurm.failWith(null);
    tick();
    cache.pollOnce();
    assertThat(told).containsExactly(3, 4);
  }

  /**
   * Issue 47: a takeover at 50,000 jobs listed the whole table again (458 MB, 3 minutes of
   * slurmrestd's CPU) after the start-up's listing. It now reads every job's state and, one by one,
   * only the jobs made since that listing: the previous writer's last placeholder is found, the
   * whole table is not read, and the takeover's wait ends as after a listing.
   */
  @Test
  void aTakeoverReadsOnlyTheJobsMadeSinceTheLastListing() {
    List<Integer> told = new ArrayList<>();
    cache.addListingListener(told::add);
    slurm.addForeignJob("training-a", JobState.RUNNING, List.of("gpu-node-0"));
    long before = submit("u1"); // the previous writer's, listed at start
    cache.pollOnce();
    assertThat(slurm.listCalls()).isEqualTo(1);
    long made = submit("u2"); // the previous writer's last, made after this cache listed
    long other = slurm.addForeignJob("training-b", JobState.PENDING, List.of());
    slurm.purge(before);
    long mark = cache.listingsBegun();
    boolean[] then = {false};
    cache.afterNextListing(() -> then[0] = true);
    cache.catchUpSoon();
    tick();
    int reads = slurm.jobsRead().size();
    cache.pollOnce();
    assertThat(slurm.listCalls()).as("the whole table is not read again").isEqualTo(1);
    assertThat(slurm.allStateCalls()).isEqualTo(1);
    assertThat(tableReads("listing")).isEqualTo(1);
    assertThat(tableReads("catch_up"))
        .as("said, so that an SRE (and the scale rig) sees the takeover's read end")
        .isEqualTo(1);
    assertThat(cache.jobFor("u2")).map(SlurmJob::id).contains(made);
    List<Long> read = slurm.jobsRead().subList(reads, slurm.jobsRead().size());
    assertThat(read.subList(0, 2))
        .as("the two jobs made since the listing, read one by one first")
        .containsExactlyInAnyOrder(made, other);
    assertThat(read.subList(2, read.size()))
        .as("then only the pass's own reads of ours (the one missing, the one just found)")
        .isSubsetOf(before, made);
    assertThat(cache.listedSince(mark)).as("the takeover's wait is over").isTrue();
    assertThat(then[0]).isTrue();
    assertThat(told)
        .as("every job's state was streamed: told too (on the rig at 50,000 jobs RSS was 351 MiB)")
        .containsExactly(2, 3);
    assertThat(cache.job(before))
        .as(
            "purged: missing from the states, then from its own read (two misses, as after a listing)")
        .isEmpty();
    tick();
    cache.catchUpSoon();
    reads = slurm.jobsRead().size();
    cache.pollOnce();
    assertThat(slurm.jobsRead().subList(reads, slurm.jobsRead().size()))
        .as("nothing made since: no other job read")
        .doesNotContain(other);
    assertThat(slurm.listCalls()).isEqualTo(1);
  }

  @Test
  void aTakeoverListsTheWholeTableWhereStatesCannotBeAskedAllAtOnceOrTooManyJobsWereMade() {
    slurm.speak(io.kse.slurm.ApiVersion.V0038);
    submit("u1");
    cache.pollOnce();
    submit("u2");
    cache.catchUpSoon();
    tick();
    cache.pollOnce();
    assertThat(slurm.listCalls()).as("22.05: the whole table").isEqualTo(2);
    assertThat(cache.jobFor("u2")).isPresent();

    slurm.speak(io.kse.slurm.ApiVersion.V0045);
    for (int i = 0; i < 200; i++) { // a tenth of the table, and some: made since the listing
      slurm.addForeignJob("before-" + i, JobState.PENDING, List.of());
    }
    cache.resyncSoon();
    tick();
    cache.pollOnce();
    for (int i = 0; i < 30; i++) {
      slurm.addForeignJob("burst-" + i, JobState.PENDING, List.of());
    }
    cache.catchUpSoon();
    tick();
    int reads = slurm.jobsRead().size();
    cache.pollOnce();
    assertThat(slurm.listCalls()).as("too many made since: the whole table").isEqualTo(4);
    assertThat(slurm.jobsRead().size() - reads).as("none of them read one by one").isLessThan(5);
    assertThat(tableReads("listing")).isEqualTo(4);
    assertThat(tableReads("catch_up")).isZero();
  }

  /** A slurmrestd that refuses every job's state at once would refuse it each pass: a listing. */
  @Test
  void aTakeoverWhoseStatesAreRefusedListsTheWholeTableInsteadOfAskingAgain() {
    io.kse.slurm.SlurmClient refusing =
        new ThisSlurm() {
          @Override
          public java.util.Optional<java.util.Map<Long, JobState>> allJobStates() {
            throw new io.kse.slurm.SlurmRejectedException("Unable to parse query");
          }
        };
    SlurmStateCache refused =
        new SlurmStateCache(
            refusing,
            Duration.ofMillis(500),
            Duration.ofSeconds(30),
            clock,
            new SimpleMeterRegistry());
    refused.pollOnce();
    submit("u1");
    long mark = refused.listingsBegun();
    refused.catchUpSoon();
    tick();
    refused.pollOnce();
    assertThat(slurm.listCalls()).as("the start's listing, then the takeover's").isEqualTo(2);
    assertThat(refused.jobFor("u1")).isPresent();
    assertThat(refused.listedSince(mark)).isTrue();
  }

  private double tableReads(String how) {
    return registry.get(io.kse.slurm.MetricNames.JOB_TABLE_READS).tag("how", how).counter().count();
  }

  @Test
  void aSecondLivePlaceholderOfOneKeyIsADuplicateAndTheOneHoldingNodesIsKept() {
    long first = submit("u1");
    long second = submit("u1"); // a retry after a submission that timed out but reached Slurm
    slurm.allocate(first, List.of("gpu-node-0"));
    cache.pollOnce();
    assertThat(cache.jobFor("u1")).map(SlurmJob::id).as("the one holding nodes").contains(first);
    assertThat(cache.duplicatesOf("u1")).extracting(SlurmJob::id).containsExactly(second);
    slurm.allocate(second, List.of("gpu-node-1"));
    tick();
    cache.resyncSoon();
    cache.pollOnce();
    assertThat(cache.jobFor("u1"))
        .map(SlurmJob::id)
        .as("both hold nodes: the one kept before stays kept (the other is being cancelled)")
        .contains(first);
    assertThat(cache.duplicatesOf("u1")).extracting(SlurmJob::id).containsExactly(second);
    slurm.end(second, JobState.CANCELLED);
    tick();
    cache.resyncSoon();
    cache.pollOnce();
    assertThat(cache.duplicatesOf("u1")).as("an ended one is no duplicate").isEmpty();
  }

  /**
   * OutageE2E found it: a lost submit answer left two placeholders; the pass kept the one holding a
   * node and cancelled the other, which Slurm allocated before the cancel landed. The cache then
   * kept the newer one (the one being cancelled) and named the kept one a duplicate: both were
   * cancelled and the bound pod was evicted. A job we asked Slurm to cancel is never kept.
   */
  @Test
  void aDuplicateWeAreCancellingIsNeverKeptEvenWhenSlurmAllocatesItBeforeTheCancelLands() {
    long first = submit("u1");
    long second = submit("u1");
    slurm.allocate(second, List.of("gpu-node-1"));
    cache.pollOnce();
    assertThat(cache.jobFor("u1")).map(SlurmJob::id).contains(second);
    slurm.allocate(first, List.of("gpu-node-0"));
    tick();
    cache.resyncSoon();
    cache.pollOnce();
    assertThat(cache.jobFor("u1")).map(SlurmJob::id).as("kept before").contains(second);
    io.kse.slurm.SlurmClient cancelNotLandedYet =
        new ThisSlurm() {
          @Override
          public void cancel(long jobId) {
            // slurmctld took it; the next listing still shows the job running
          }
        };
    cache.tracking(cancelNotLandedYet).cancel(second);
    cache.pollOnce();
    assertThat(cache.jobFor("u1"))
        .map(SlurmJob::id)
        .as("the one we are cancelling is not kept, though Slurm still shows it running")
        .contains(first);
    assertThat(cache.duplicatesOf("u1")).extracting(SlurmJob::id).containsExactly(second);
    tick();
    cache.resyncSoon();
    cache.pollOnce();
    assertThat(cache.jobFor("u1")).map(SlurmJob::id).as("and never again").contains(first);
  }

  @Test
  void anUnchangedQueueCostsNoFullListing() {
    submit("u1");
    cache.pollOnce();
    tick();
    cache.pollOnce();
    cache.pollOnce();
    assertThat(changes).hasSize(1);
  }

  @Test
  void aJobMissingFromOneListingIsKeptUntilASecondConfirms() {
    long id = submit("u1");
    long other = submit("u2");
    cache.pollOnce();
    slurm.purge(id);
    tick();
    slurm.end(other, JobState.COMPLETED); // something changed, so the next listing is full
    cache.pollOnce();
    assertThat(cache.job(id)).as("missing once: not yet gone").isPresent();
    assertThat(changes).noneMatch(c -> c.after().isEmpty());
    tick();
    cache.pollOnce();
    assertThat(cache.job(id)).isEmpty();
    assertThat(cache.jobFor("u1")).isEmpty();
    assertThat(changes)
        .filteredOn(c -> c.after().isEmpty())
        .singleElement()
        .extracting(JobChange::jobId)
        .isEqualTo(id);
  }

  @Test
  void aRequeuedPlaceholderIsStillFoundAndTheLiveJobWinsOverAnEndedOne() {
    long first = submit("u1");
    slurm.end(first, JobState.CANCELLED);
    long second = submit("u1");
    cache.pollOnce();
    assertThat(cache.jobFor("u1")).map(SlurmJob::id).contains(second);
  }

  @Test
  void keepsTheLastGoodViewWhileSlurmIsDownAndReportsItsAge() {
    long id = submit("u1");
    cache.pollOnce();
    slurm.failWith(FakeSlurmClient.outage());
    clock.advance(Duration.ofSeconds(7));
    assertThatThrownBy(cache::pollOnce).isInstanceOf(SlurmUnavailableException.class);
    assertThat(cache.job(id)).isPresent();
    assertThat(cache.age()).isEqualTo(Duration.ofSeconds(7));
    slurm.failWith(null);
    cache.pollOnce();
    assertThat(cache.age()).isZero();
  }

  @Test
  void notifiesNodeChanges() {
    List<String> seen = new ArrayList<>();
    cache.addNodeListener(
        (before, after) ->
            seen.add(after.map(n -> n.name() + ":" + n.isDraining()).orElse("gone")));
    cache.pollOnce();
    slurm.drain("gpu-node-0", "test");
    cache.pollOnce();
    assertThat(seen).contains("gpu-node-0:true");
    assertThat(cache.node("gpu-node-0")).get().extracting(n -> n.reason()).isEqualTo("test");
  }

  /** This test's fake Slurm, a call or two changed. */
  private abstract class ThisSlurm extends io.kse.slurm.ForwardingSlurmClient {
    @Override
    protected io.kse.slurm.SlurmClient delegate() {
      return slurm;
    }
  }

  private void tick() {
    clock.advance(Duration.ofSeconds(1));
  }

  /** A clock tests move by hand. */

  /** Issue 28: an unchanged node table costs one small answer a poll, not the whole table. */
  @Test
  void theNodeTableIsReadOnlyWhenANodeChangedAndAtEachResync() {
    cache.pollOnce();
    assertThat(slurm.nodeTableCalls()).isEqualTo(1);
    for (int i = 0; i < 5; i++) {
      clock.advance(Duration.ofMillis(500));
      cache.pollOnce();
    }
    assertThat(slurm.nodeTableCalls()).as("nothing changed").isEqualTo(1);
    slurm.drain("gpu-node-1", "bad GPU");
    cache.pollOnce();
    assertThat(slurm.nodeTableCalls()).isEqualTo(2);
    assertThat(cache.node("gpu-node-1").orElseThrow().isDraining()).isTrue();
    assertThat(cache.node("gpu-node-0")).as("the others kept").isPresent();
    clock.advance(Duration.ofSeconds(31));
    cache.pollOnce();
    assertThat(slurm.nodeTableCalls()).as("the resync lists it whole").isEqualTo(3);
  }

  /**
   * Issue 28: with node triggers the table is listed minutes apart; a trigger's hint reads the
   * nodes it names (one {@code GET node} each) and the listeners hear of them at once. Many names,
   * a name Slurm does not know, or Slurm not answering, and the table is listed on the next pass.
   */
  @Test
  void aNodeHintReadsTheNodesItNamesAndOtherwiseTheTableComesNextPass() {
    SlurmStateCache slow = withTheNodeTableMinutesApart();
    List<String> seen = new ArrayList<>();
    slow.addNodeListener(
        (before, after) ->
            seen.add(after.map(n -> n.name() + ":" + n.isDraining()).orElse("gone")));
    slow.pollOnce();
    seen.clear(); // the first listing's nodes
    int asks = slurm.nodeListingAsks();
    slurm.drain("gpu-node-1", "bad GPU");
    pass(slow);
    assertThat(slow.node("gpu-node-1").orElseThrow().isDraining())
        .as("the table is minutes apart")
        .isFalse();

    slow.refreshNodes(List.of("gpu-node-1"));
    assertThat(slurm.nodeReads()).isEqualTo(1);
    assertThat(slow.node("gpu-node-1").orElseThrow().isDraining()).isTrue();
    assertThat(seen).containsExactly("gpu-node-1:true");
    pass(slow);
    assertThat(slurm.nodeListingAsks()).as("no table for a node read").isEqualTo(asks);

    slow.refreshNodes(List.of("gpu-node-9")); // a node Slurm does not have (removed, renamed)
    pass(slow);
    assertThat(slurm.nodeListingAsks()).isEqualTo(asks + 1);

    List<String> many = new ArrayList<>();
    for (int i = 0; i <= NodeTable.MAX_NODE_READS; i++) {
      many.add("gpu-node-" + i);
    }
    int reads = slurm.nodeReads();
    slow.refreshNodes(many);
    assertThat(slurm.nodeReads()).as("too many to read one by one").isEqualTo(reads);
    pass(slow);
    assertThat(slurm.nodeListingAsks()).isEqualTo(asks + 2);

    slurm.failWith(new SlurmUnavailableException("slurmrestd down"));
    slow.refreshNodes(List.of("gpu-node-0")); // does not throw: the hint is only a hint
    slurm.failWith(null);
    pass(slow);
    assertThat(slurm.nodeListingAsks()).isEqualTo(asks + 3);
    pass(slow);
    assertThat(slurm.nodeListingAsks()).as("then minutes apart again").isEqualTo(asks + 3);
  }

  /** The production cadence where Slurm's node triggers are set: the node table every 5 min. */
  private SlurmStateCache withTheNodeTableMinutesApart() {
    return new SlurmStateCache(
        slurm,
        io.kse.slurm.StateCadence.of(
            Duration.ofMillis(500),
            Duration.ofSeconds(10),
            Duration.ofMinutes(5),
            Duration.ofMinutes(5),
            100),
        clock,
        new SimpleMeterRegistry());
  }

  private void pass(SlurmStateCache c) {
    clock.advance(Duration.ofMillis(500));
    c.pollOnce();
  }

  /**
   * Issue 43: on 22.05 (no resume trigger), or with a trigger lost, a resumed node stayed drained
   * in the cache until the node table, 5 min on, and our taint kept the pod Slurm placed there off
   * it. A placeholder started on a node held as unavailable is proof it is back: read it then.
   */
  @Test
  void aPlaceholderStartedOnANodeHeldAsDrainedHasThatNodeReadAgain() {
    SlurmStateCache slow = withTheNodeTableMinutesApart();
    slurm.drain("gpu-node-1", "maintenance");
    long id =
        slow.tracking(slurm)
            .submit(JobSubmission.builder(new PlaceholderTag("ns", "pod-a", "a")).build());
    slow.pollOnce();
    assertThat(slow.node("gpu-node-1").orElseThrow().isUnavailable()).isTrue();
    slurm.resume("gpu-node-1"); // its trigger lost: nothing tells the cache
    slurm.allocate(id, List.of("gpu-node-1"));
    int reads = slurm.nodeReads();
    int asks = slurm.nodeListingAsks();
    pass(slow);
    assertThat(slow.job(id).orElseThrow().isAllocated()).isTrue();
    assertThat(slow.node("gpu-node-1").orElseThrow().isUnavailable())
        .as("read again when Slurm placed our job there")
        .isFalse();
    assertThat(slurm.nodeReads()).isEqualTo(reads + 1);
    assertThat(slurm.nodeListingAsks()).as("not the table").isEqualTo(asks);
    pass(slow);
    assertThat(slurm.nodeReads()).as("once").isEqualTo(reads + 1);
  }
}
