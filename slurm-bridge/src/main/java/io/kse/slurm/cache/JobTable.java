package io.kse.slurm.cache;

import io.kse.slurm.JobState;
import io.kse.slurm.PlaceholderOwner;
import io.kse.slurm.SlurmClient;
import io.kse.slurm.SlurmJob;
import io.kse.slurm.SlurmRejectedException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * slurmctld's whole job table — everyone's jobs, so read only at start, when in doubt and as the
 * safety net — and what hangs on it: orphans and lost submissions found, impostors counted, the
 * takeover's "listed since", callbacks waiting for the next listing.
 *
 * <p>A takeover catches up instead where slurmrestd can say every job's state in one small answer
 * (v0.0.41+): slurmctld numbers jobs as they are made, so the jobs made since the last listing —
 * the previous writer's last placeholders among them — are the ids that listing did not hold, read
 * one by one. At 50,000 jobs the whole table was 458 MB and 3 minutes of slurmrestd's CPU.
 */
final class JobTable {
  private static final Logger LOG = LoggerFactory.getLogger(JobTable.class);

  private final SlurmClient client;
  private final Duration safetyNet;
  private final java.time.Clock clock;
  private volatile boolean requested = true;
  private volatile Instant lostAnswerAt = Instant.MIN;
  private volatile Duration lastTook = Duration.ZERO;
  private volatile Set<Long> impostors = Set.of();
  private volatile boolean synced;
  private final AtomicLong begun = new AtomicLong();
  private volatile long lastPublished;
  private volatile int tableSize;
  private final List<Runnable> afterListing = new CopyOnWriteArrayList<>();
  private volatile boolean catchUpAsked;
  private volatile boolean lastCaughtUp; // the last read of the table was a catch-up
  private Instant lastListing = Instant.EPOCH; // under the pass lock
  // every id the last listing held, and those catching up read since, sorted (under the pass lock)
  private long[] listedIds;

  /**
   * Jobs made since the last listing read one by one when catching up, at most, as a share of the
   * table: past a tenth, the whole table instead. One read costs slurmrestd a few times what one
   * job of a listing does; on the scale rig (50,000 jobs with churn) 1,213 jobs were made during
   * the start-up's own 4-minute listing, and a cap of 1,000 sent the takeover to a second listing.
   */
  static final int CATCH_UP_READS_PER_TABLE = 10;

  /** Whatever the table's size, this many may be read one by one. */
  static final int MIN_CATCH_UP_READS = 16;

  JobTable(SlurmClient client, Duration safetyNet, java.time.Clock clock) {
    this.client = client;
    this.safetyNet = safetyNet;
    this.clock = clock;
  }

  /** The whole table on the next pass: start, takeover, an owner that changed, or a failure. */
  void requestListing() {
    requested = true;
  }

  /** A submission got no answer: the job may exist all the same, and only a listing finds it. */
  void lostAnswer(Instant at) {
    lostAnswerAt = at;
  }

  /**
   * The jobs made since the last listing on the next pass (a takeover): by difference where
   * slurmrestd can say every job's state at once, else the whole table. Either counts as a listing
   * for {@link #listedSince} and the callbacks.
   */
  void requestCatchUp() {
    catchUpAsked = true;
  }

  /** Whether the last read of the table {@link #list} made was a catch-up, not a listing. */
  boolean lastCaughtUp() {
    return lastCaughtUp;
  }

  boolean due(Instant now) {
    return catchUpAsked || wholeDue(now);
  }

  private boolean wholeDue(Instant now) {
    return PassPlan.listJobs(
        requested, lastListing, PassPlan.safetyNet(safetyNet, lastTook), lostAnswerAt, now);
  }

  /**
   * Lists the table into {@code pass}: ours are observed, ours missing count as a miss (a purged
   * ended one is simply gone), live impostors are counted. Returns the listing's number, for {@link
   * #published} once the pass is.
   */
  long list(Pass pass, OurJobs book, Instant now) {
    boolean catchUp = catchUpAsked && listedIds != null && !wholeDue(now);
    catchUpAsked = false;
    long seq = begun.incrementAndGet();
    if (catchUp) {
      try {
        if (caughtUp(pass, book)) {
          lastCaughtUp = true;
          return seq;
        }
      } catch (RuntimeException e) {
        catchUpAsked = true;
        throw e;
      }
    }
    requested = false;
    long read = book.beginRead();
    long began = System.nanoTime();
    PlaceholderOwner who = pass.owner();
    List<SlurmJob> listing;
    IdList ids = new IdList();
    try {
      // kept as read: ours, and live impostors to count; everyone else's jobs are only counted
      listing =
          client.allJobs(
              j -> {
                ids.add(j.id());
                return who.tagOf(j).isPresent() || who.impostor(j) && !j.state().isFinal();
              });
    } catch (RuntimeException e) {
      requested = true;
      throw e;
    }
    lastTook = Duration.ofNanos(System.nanoTime() - began);
    lastCaughtUp = false;
    tableSize = ids.size();
    listedIds = ids.sorted();
    lastListing = now;
    Instant at = clock.instant();
    Set<Long> seen = new HashSet<>();
    Set<Long> seenImpostors = new HashSet<>();
    for (SlurmJob j : listing) {
      if (who.impostor(j) && !j.state().isFinal()) { // an ended copy can do no harm
        impostorSeen(j, seenImpostors);
      }
      if (who.tagOf(j).isPresent()) {
        seen.add(j.id());
        pass.observedJob(j, at, read);
      }
    }
    impostors = Set.copyOf(seenImpostors);
    for (Long id : List.copyOf(pass.jobs.keySet())) {
      SlurmJob j = pass.jobs.get(id);
      if (who.tagOf(j).isEmpty()) { // no longer ours: the owner became known since
        pass.jobs.remove(id);
        pass.jobsChanged = true;
      } else if (!seen.contains(id)) {
        missing(pass, book, id, at);
      }
    }
    LOG.debug("slurm_full_listing ours={} impostors={}", seen.size(), seenImpostors.size());
    return seq;
  }

  /**
   * Catching up by difference: every job's state, then the ids the last listing did not hold read
   * one by one (ours observed, live impostors counted); ours slurmctld no longer has count as a
   * miss, as in a listing. False, having read nothing but the states, where slurmrestd cannot say
   * every state at once or too many jobs were made since: the whole table then.
   */
  private boolean caughtUp(Pass pass, OurJobs book) {
    long began = System.nanoTime();
    Optional<Map<Long, JobState>> answer;
    try {
      answer = client.allJobStates();
    } catch (SlurmRejectedException e) {
      // a slurmrestd that refuses the form would refuse it on every pass: the takeover would never
      // end; an unreachable one fails the pass, as a listing would
      LOG.warn("slurm_catch_up_by_listing reason=job_states_refused error=\"{}\"", e.getMessage());
      return false;
    }
    if (answer.isEmpty()) {
      return false;
    }
    Map<Long, JobState> states = answer.get();
    List<Long> made = new ArrayList<>();
    for (long id : states.keySet()) {
      if (Arrays.binarySearch(listedIds, id) < 0 && !pass.jobs.containsKey(id)) {
        made.add(id);
      }
    }
    if (made.size() > Math.max(MIN_CATCH_UP_READS, states.size() / CATCH_UP_READS_PER_TABLE)) {
      LOG.info(
          "slurm_catch_up_by_listing jobs={} madeSinceListing={} reason=too_many_to_read",
          states.size(),
          made.size());
      return false;
    }
    long read = book.beginRead();
    PlaceholderOwner who = pass.owner();
    Set<Long> live = new HashSet<>(impostors);
    int ours = 0;
    for (long id : made) {
      Optional<SlurmJob> j = PassReads.job(client, id);
      if (j.isEmpty()) {
        continue;
      }
      if (who.tagOf(j.get()).isPresent()) {
        pass.observedJob(j.get(), clock.instant(), read);
        ours++;
      } else if (who.impostor(j.get()) && !j.get().state().isFinal()) {
        impostorSeen(j.get(), live);
      }
    }
    live.removeIf(id -> !states.containsKey(id) || states.get(id).isFinal());
    impostors = Set.copyOf(live);
    Instant at = clock.instant();
    for (Long id : List.copyOf(pass.jobs.keySet())) {
      if (!states.containsKey(id)) {
        missing(pass, book, id, at);
      }
    }
    IdList merged = new IdList(listedIds);
    made.forEach(merged::add);
    listedIds = merged.sorted();
    tableSize = states.size();
    LOG.info(
        "slurm_caught_up jobs={} madeSinceListing={} ours={} tookMs={}",
        states.size(),
        made.size(),
        ours,
        (System.nanoTime() - began) / 1_000_000);
    return true;
  }

  /** One of ours slurmctld did not show (unless we made it and look for it still). */
  private static void missing(Pass pass, OurJobs book, long id, Instant at) {
    if (book.lookingFor(id)) {
      return;
    }
    if (pass.jobs.get(id).state().isFinal()) {
      pass.gone(id, at); // ended, then purged (MinJobAge): nothing to confirm by a read
    } else {
      pass.missed(id, at); // live: a second miss in a row says gone
    }
  }

  /** A live job with our tag under another Slurm user: counted, and said once when first seen. */
  private void impostorSeen(SlurmJob j, Set<Long> seen) {
    seen.add(j.id());
    if (!impostors.contains(j.id())) {
      LOG.warn(
          "placeholder_impostor slurmJob={} slurmUser=\"{}\" claims=\"{}\" action=ignore",
          j.id(),
          printable(j.user()),
          printable(j.comment()));
    }
  }

  /**
   * The pass holding listing {@code seq} is published: the table counts as read, and the callbacks
   * that were waiting before it began ({@code answered}) are no longer waiting.
   */
  void published(long seq, List<Runnable> answered) {
    lastPublished = seq;
    synced = true;
    afterListing.removeAll(answered);
  }

  /** The callbacks waiting now: those a listing about to begin will answer. */
  List<Runnable> waiting() {
    return List.copyOf(afterListing);
  }

  void afterNextListing(Runnable r) {
    afterListing.add(r);
  }

  boolean synced() {
    return synced;
  }

  long begun() {
    return begun.get();
  }

  boolean listedSince(long mark) {
    return lastPublished > mark;
  }

  /** How many jobs (everyone's) the last listing read: what streaming it cost in garbage. */
  int tableSize() {
    return tableSize;
  }

  int impostors() {
    return impostors.size();
  }

  /** Ids as a listing streams them: eight bytes each, never a boxed set of 50,000. */
  private static final class IdList {
    private long[] ids;
    private int size;

    IdList() {
      ids = new long[1024];
    }

    /** These ids, and more to add. */
    IdList(long[] from) {
      ids = Arrays.copyOf(from, Math.max(1024, from.length * 2));
      size = from.length;
    }

    void add(long id) {
      if (size == ids.length) {
        ids = Arrays.copyOf(ids, size * 2);
      }
      ids[size++] = id;
    }

    int size() {
      return size;
    }

    long[] sorted() {
      long[] out = Arrays.copyOf(ids, size);
      Arrays.sort(out);
      return out;
    }
  }

  /** Text from Slurm that any user wrote, safe on one log line. */
  private static String printable(String s) {
    String cut = s.length() > 200 ? s.substring(0, 200) + "…" : s;
    return cut.replaceAll("[\\p{Cntrl}\"\\\\]", "?");
  }
}
