package io.kse.slurm.cache;

import static org.assertj.core.api.Assertions.assertThat;

import io.kse.slurm.JobState;
import io.kse.slurm.SlurmJob;
import io.kse.slurm.StateCadence;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The pass plan as a table: one placeholder of ours in a given state and bookkeeping, and where the
 * plan puts it (state check, urgent read, read at its cadence, or nothing), with and without
 * batched state checks.
 */
class PassPlanTest {
  private static final Instant NOW = Instant.parse("2026-11-28T12:00:00Z");
  private static final StateCadence CADENCE =
      StateCadence.of(
          Duration.ofMillis(500),
          Duration.ofSeconds(5),
          Duration.ofSeconds(10),
          Duration.ofMinutes(5),
          32);

  enum Where {
    STATE_CHECK,
    URGENT,
    DUE,
    NOTHING
  }

  /** What the book says of the job before the pass. */
  record Book(
      Duration readAgo, boolean hot, boolean missedOnce, boolean hooksHeard, boolean batch) {}

  static Stream<Arguments> rows() {
    Duration fresh = Duration.ofSeconds(1);
    Duration stale = Duration.ofSeconds(6);
    return Stream.of(
        // state, read ago, hot, missed once, hooks heard, batch -> where
        row(JobState.RUNNING, fresh, false, false, true, true, Where.STATE_CHECK),
        row(JobState.RUNNING, stale, false, false, true, true, Where.DUE),
        row(JobState.RUNNING, fresh, true, false, true, true, Where.STATE_CHECK),
        row(JobState.RUNNING, fresh, false, true, true, true, Where.URGENT),
        row(JobState.PENDING, fresh, false, false, true, true, Where.STATE_CHECK),
        row(JobState.PENDING, Duration.ofSeconds(3), false, false, true, true, Where.DUE),
        // an ended placeholder is not read again; checked only while hot
        row(JobState.COMPLETED, stale, false, false, true, true, Where.NOTHING),
        row(JobState.COMPLETED, stale, true, false, true, true, Where.STATE_CHECK),
        row(JobState.CANCELLED, stale, false, true, true, true, Where.URGENT),
        // 22.05 (no batched checks): a hot live job every pass only while the hooks are not
        // heard (its start and end come by hook), else at its cadence
        row(JobState.PENDING, fresh, true, false, true, false, Where.NOTHING),
        row(JobState.PENDING, Duration.ofSeconds(3), true, false, true, false, Where.DUE),
        row(JobState.PENDING, fresh, true, false, false, false, Where.URGENT),
        row(JobState.RUNNING, fresh, true, false, true, false, Where.NOTHING),
        row(JobState.RUNNING, fresh, true, false, false, false, Where.URGENT),
        row(JobState.RUNNING, stale, false, false, true, false, Where.DUE),
        row(JobState.RUNNING, fresh, false, false, false, false, Where.NOTHING),
        row(JobState.COMPLETED, fresh, true, false, false, false, Where.NOTHING));
  }

  private static Arguments row(
      JobState state,
      Duration readAgo,
      boolean hot,
      boolean missedOnce,
      boolean hooksHeard,
      boolean batch,
      Where where) {
    return Arguments.of(state, new Book(readAgo, hot, missedOnce, hooksHeard, batch), where);
  }

  @ParameterizedTest(name = "{0} {1} -> {2}")
  @MethodSource("rows")
  void eachJobGoesWhereItsStateAndBookkeepingSay(JobState state, Book b, Where where) {
    OurJobs book = new OurJobs();
    long id = 7;
    book.read(id, NOW.minus(b.readAgo()));
    if (b.hot()) {
      book.heat(id, NOW.minusSeconds(1));
    }
    if (b.missedOnce()) {
      book.secondMiss(id, NOW.minus(Duration.ofMinutes(1))); // heats it for 10 s from then: cold
    }
    if (b.hooksHeard()) {
      book.allocationHinted(NOW.minusSeconds(30));
    }
    PassPlan plan = PassPlan.of(List.of(job(id, state)), book, b.batch(), CADENCE, NOW);
    assertThat(where(plan, id)).isEqualTo(where);
  }

  private static Where where(PassPlan plan, long id) {
    if (plan.urgent().contains(id)) {
      return Where.URGENT;
    } else if (plan.due().contains(id)) {
      return Where.DUE;
    } else if (plan.stateChecks().contains(id)) {
      return Where.STATE_CHECK;
    }
    return Where.NOTHING;
  }

  @Test
  void jobsWeMadeComeFirstNamesFromHintsAreReadAFewAPassAndChangedOnesLeadTheReads() {
    OurJobs book = new OurJobs();
    book.madeOrChanged(100, false, NOW);
    for (long id = 1000; id < 1100; id++) {
      book.hinted(id, false, NOW);
    }
    book.read(1000, NOW.minusSeconds(1)); // read once already: the never-read go first
    SlurmJob running = job(5, JobState.RUNNING);
    book.read(5, NOW.minusSeconds(60));
    PassPlan plan = PassPlan.of(List.of(running), book, true, CADENCE, NOW);
    assertThat(plan.urgent()).containsExactly(100L);
    assertThat(plan.hinted()).hasSize(PassPlan.MAX_HINTED_READS).doesNotContain(1000L);
    assertThat(plan.due()).containsExactly(5L);
    List<Long> reads = plan.reads(List.of(9L, 100L));
    assertThat(reads).hasSize(2 + PassPlan.MAX_HINTED_READS + 1).startsWith(9L, 100L).endsWith(5L);
    PassPlan capped = PassPlan.of(List.of(running), book, true, withMaxReads(3), NOW);
    assertThat(capped.reads(List.of(9L))).as("the rest next pass").hasSize(3).startsWith(9L, 100L);
  }

  /**
   * A burst on 22.05: a pass reads 32 of 200 hot pending placeholders. The one Slurm just started
   * (its allocation hint named it) is read first, not after the others its id sorts behind; the
   * rest are read longest unread first, so every one is read in turn.
   */
  @Test
  void inABurstTheJobAHintNamedIsReadFirstAndTheOthersInTurn() {
    OurJobs book = new OurJobs();
    List<SlurmJob> burst = new java.util.ArrayList<>();
    for (long id = 1; id <= 200; id++) {
      burst.add(job(id, JobState.PENDING));
      book.madeOrChanged(id, true, NOW.minusSeconds(2)); // hot
      book.read(id, NOW.minusMillis(id <= 32 ? 100 : 1_000)); // the first 32 were read last pass
    }
    book.hinted(150, true, NOW.minusMillis(50)); // a hint, but the hooks not yet heard
    PassPlan plan = PassPlan.of(burst, book, false, CADENCE, NOW);
    List<Long> reads = plan.reads(List.of());
    assertThat(reads).hasSize(32).startsWith(150L).doesNotContain(1L, 32L).contains(33L);
    book.allocationHinted(NOW.minusSeconds(1)); // hooks heard: the pending ones at their cadence
    assertThat(PassPlan.of(burst, book, false, CADENCE, NOW).reads(List.of()))
        .containsExactly(150L);

    book.read(150, NOW); // read: no longer first
    assertThat(PassPlan.of(burst, book, false, CADENCE, NOW.plusSeconds(3)).reads(List.of()))
        .hasSize(32)
        .doesNotContain(150L);
    book.hinted(7, true, NOW); // named again later, or first on a batch version too
    assertThat(PassPlan.of(burst, book, true, CADENCE, NOW).reads(List.of())).startsWith(7L);
  }

  @Test
  void aFloodOfNamesIsBoundedAndNeverCrowdsOutOurOwn() {
    OurJobs book = new OurJobs();
    int taken = 0;
    for (long id = 1; id <= 5000; id++) {
      taken += book.hinted(id, false, NOW) ? 1 : 0;
    }
    assertThat(taken).isEqualTo(OurJobs.MAX_HINTED);
    book.madeOrChanged(9_999, false, NOW); // ours: never dropped
    assertThat(book.lookingFor(9_999)).isTrue();
    PassPlan plan = PassPlan.of(List.of(), book, true, CADENCE, NOW);
    assertThat(plan.reads(List.of())).startsWith(9_999L).hasSize(1 + PassPlan.MAX_HINTED_READS);
  }

  @ParameterizedTest(name = "requested={0} listed {1} s ago, answer lost {2} s ago -> {3}")
  @MethodSource("listings")
  void theJobTableIsListedWhenAskedWhenTheSafetyNetIsDueOrAfterALostAnswer(
      boolean requested, long listedAgo, long lostAgo, boolean list) {
    Instant lost = lostAgo < 0 ? Instant.MIN : NOW.minusSeconds(lostAgo);
    assertThat(
            PassPlan.listJobs(
                requested, NOW.minusSeconds(listedAgo), Duration.ofMinutes(5), lost, NOW))
        .isEqualTo(list);
  }

  static Stream<Arguments> listings() {
    return Stream.of(
        Arguments.of(true, 1, -1, true),
        Arguments.of(false, 299, -1, false),
        Arguments.of(false, 300, -1, true),
        Arguments.of(false, 90, 30, true), // lost after the listing began, 60 s since it
        Arguments.of(false, 30, 10, false), // ... but not sooner than 60 s after it
        Arguments.of(false, 90, 120, false)); // lost before the last listing: it found the job
  }

  @Test
  void aSlowListingStretchesTheSafetyNetToAtMostOneTwentiethOfSlurmrestdsTime() {
    Duration five = Duration.ofMinutes(5);
    assertThat(PassPlan.safetyNet(five, Duration.ofMillis(900))).isEqualTo(five);
    assertThat(PassPlan.safetyNet(five, Duration.ofSeconds(10))).isEqualTo(five);
    assertThat(PassPlan.safetyNet(five, Duration.ofSeconds(54))).isEqualTo(Duration.ofMinutes(18));
  }

  private static StateCadence withMaxReads(int n) {
    return new StateCadence(
        CADENCE.poll(),
        CADENCE.pendingRead(),
        CADENCE.runningRead(),
        CADENCE.nodes(),
        CADENCE.safetyNet(),
        n,
        CADENCE.maxStateIdsPerPoll(),
        CADENCE.listingTimeout());
  }

  private static SlurmJob job(long id, JobState state) {
    boolean ran = state != JobState.PENDING;
    return new SlurmJob(
        id,
        "kse-x",
        "",
        state,
        "",
        "gpu",
        "",
        ran ? List.of("gpu-node-0") : List.of(),
        1,
        NOW.minusSeconds(600),
        ran ? Optional.of(NOW.minusSeconds(300)) : Optional.empty(),
        state.isFinal() ? Optional.of(NOW.minusSeconds(60)) : Optional.empty(),
        0,
        "gres:gpu:1",
        "",
        1,
        NOW.minusSeconds(60));
  }
}
