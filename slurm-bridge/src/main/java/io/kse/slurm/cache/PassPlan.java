package io.kse.slurm.cache;

import io.kse.slurm.JobState;
import io.kse.slurm.SlurmJob;
import io.kse.slurm.StateCadence;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * What one pass asks Slurm, decided from what the cache holds and when it last looked — no calls,
 * no clock of its own (tested as a table: PassPlanTest). What it costs slurmctld grows with our own
 * jobs: states of our live jobs in batches where slurmrestd can ({@code stateChecks}), full reads
 * of the jobs whose state changed, that we made and look for, that an allocation hint named, that
 * missed once or must be read every pass ({@code urgent}, in that order), a few names from hints
 * ({@code hinted}), and the rest at their cadence ({@code due}) — at most {@code maxReads} reads.
 */
record PassPlan(
    List<Long> stateChecks, List<Long> urgent, List<Long> hinted, List<Long> due, int maxReads) {

  /** Names from hints read in one pass, at most: a flood of them waits, our own jobs do not. */
  static final int MAX_HINTED_READS = 16;

  /**
   * The least time between a listing and the next one a lost submission answer asks for: a storm of
   * timeouts (an overloaded slurmrestd) must not list slurmctld's whole table back to back.
   */
  static final Duration LOST_ANSWER_LISTING_GAP = Duration.ofSeconds(60);

  /**
   * Whether this pass lists slurmctld's whole job table: asked for (start, takeover, a failed
   * listing), the safety net's period is up, or a submission's answer was lost after the last
   * listing began (not sooner than {@link #LOST_ANSWER_LISTING_GAP} after it).
   */
  static boolean listJobs(
      boolean requested,
      Instant lastListing,
      Duration safetyNet,
      Instant lostAnswerAt,
      Instant now) {
    Duration since = Duration.between(lastListing, now);
    return requested
        || since.compareTo(safetyNet) >= 0
        || !lostAnswerAt.isBefore(lastListing) && since.compareTo(LOST_ANSWER_LISTING_GAP) >= 0;
  }

  /**
   * The safety net's period: the configured one, stretched so that listing takes at most 1/20 of
   * slurmrestd's time (at 20,000 jobs on 10,000 nodes one took 54 s: every 18 min, not every 5).
   */
  static Duration safetyNet(Duration configured, Duration lastListingTook) {
    if (lastListingTook.compareTo(Duration.ofSeconds(1)) < 0) {
      return configured; // a cheap listing: as configured (tests list every pass)
    }
    Duration share = lastListingTook.multipliedBy(20);
    return share.compareTo(configured) > 0 ? share : configured;
  }

  /** Whether the node table is due: its interval is up (a lost trigger makes it due at once). */
  static boolean listNodes(Instant lastListing, Duration every, Instant now) {
    return Duration.between(lastListing, now).compareTo(every) >= 0;
  }

  /**
   * The checks and reads due for {@code jobs} (the cache's, after this pass's listing if any).
   *
   * @param batch slurmrestd checks many jobs' states in one call (v0.0.39+)
   */
  static PassPlan of(
      Collection<SlurmJob> jobs, OurJobs book, boolean batch, StateCadence cadence, Instant now) {
    boolean hooksDeliver = book.hooksDeliver(now);
    Set<Long> held = new HashSet<>();
    List<Long> named = new ArrayList<>();
    List<Long> urgent = new ArrayList<>();
    List<Long> states = new ArrayList<>();
    List<Long> due = new ArrayList<>();
    for (SlurmJob j : jobs) {
      long id = j.id();
      held.add(id);
      boolean hot = book.hot(id, now);
      // A placeholder that ended is not read again: only a hand requeue brings it back, and a
      // requeued job's start calls the allocation hook (the safety-net listing finds it, and drops
      // the job once Slurm purged it). Read at the running cadence, the ended placeholders of a
      // 200-pod burst kept an idle extender at the per-pass cap for MinJobAge.
      boolean over = j.state().isFinal();
      boolean pending = j.state() == JobState.PENDING;
      Duration every = pending ? cadence.pendingRead() : cadence.runningRead();
      boolean readDue = !over && OurJobs.ago(book.lastRead(id), now).compareTo(every) >= 0;
      // Without batched state checks, a live job that just changed is read every pass only while
      // the hooks are not heard: its start and end come by hook (a started one is read first,
      // named), and a hint lost meanwhile costs at most its cadence. Read every pass, a burst's
      // hundreds of pending jobs filled every pass and held back the reads of those that started.
      boolean readEveryPass = !batch && hot && !over && !hooksDeliver;
      if (!over && book.named(id)) {
        named.add(id);
      } else if (book.missingOnce(id) || readEveryPass) {
        urgent.add(id);
      } else if (readDue) {
        due.add(id);
      } else if (batch && (hot || !over)) {
        states.add(id);
      }
    }
    // the longest unread first: a burst's hot jobs, more than a pass reads, are read in turn
    urgent.sort(
        Comparator.comparing((Long id) -> OurJobs.ago(book.lastRead(id), now))
            .reversed()
            .thenComparing(Comparator.naturalOrder()));
    Set<Long> madeIds = book.made();
    List<Long> made = new ArrayList<>(madeIds);
    made.removeIf(held::contains);
    made.sort(Comparator.naturalOrder());
    named.sort(Comparator.naturalOrder());
    urgent.addAll(0, named);
    urgent.addAll(0, made);
    List<Long> hinted = new ArrayList<>(book.hinted());
    hinted.removeIf(id -> held.contains(id) || madeIds.contains(id));
    // never read first, then the longest unread: a flood of names is worked through in turn
    hinted.sort(
        Comparator.comparing((Long id) -> OurJobs.ago(book.lastRead(id), now))
            .reversed()
            .thenComparing(Comparator.naturalOrder()));
    states.sort(
        Comparator.comparing(book::lastStateCheck).thenComparing(Comparator.naturalOrder()));
    due.sort(
        Comparator.comparing((Long id) -> OurJobs.ago(book.lastRead(id), now))
            .reversed()
            .thenComparing(Comparator.naturalOrder()));
    return new PassPlan(
        List.copyOf(states.subList(0, Math.min(states.size(), cadence.maxStateIdsPerPoll()))),
        List.copyOf(urgent),
        List.copyOf(hinted.subList(0, Math.min(hinted.size(), MAX_HINTED_READS))),
        List.copyOf(due),
        cadence.maxReadsPerPoll());
  }

  /**
   * The jobs to read in full, in order, given those whose state the checks found changed: changed
   * first, then urgent, hinted, due; each once, at most {@code maxReads} (the rest next pass).
   */
  List<Long> reads(Collection<Long> changed) {
    LinkedHashSet<Long> order = new LinkedHashSet<>(changed);
    order.addAll(urgent);
    order.addAll(hinted);
    order.addAll(due);
    return order.stream().limit(maxReads).toList();
  }
}
