package io.kse.slurm.cache;

import io.kse.slurm.PlaceholderOwner;
import io.kse.slurm.SlurmClient;
import io.kse.slurm.SlurmJob;
import java.time.Duration;
import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * slurmctld's whole job table — everyone's jobs, so read only at start, on takeover and as the
 * safety net — and what hangs on it: orphans and lost submissions found, impostors counted, the
 * takeover's "listed since", callbacks waiting for the next listing.
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
  private Instant lastListing = Instant.EPOCH; // under the pass lock

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

  boolean due(Instant now) {
    return PassPlan.listJobs(
        requested, lastListing, PassPlan.safetyNet(safetyNet, lastTook), lostAnswerAt, now);
  }

  /**
   * Lists the table into {@code pass}: ours are observed, ours missing count as a miss (a purged
   * ended one is simply gone), live impostors are counted. Returns the listing's number, for {@link
   * #published} once the pass is.
   */
  long list(Pass pass, OurJobs book, Instant now) {
    requested = false;
    long seq = begun.incrementAndGet();
    long read = book.beginRead();
    long began = System.nanoTime();
    PlaceholderOwner who = pass.owner();
    List<SlurmJob> listing;
    int[] inTable = {0};
    try {
      // kept as read: ours, and live impostors to count; everyone else's jobs are never held
      listing =
          client.allJobs(
              j -> {
                inTable[0]++;
                return who.tagOf(j).isPresent() || who.impostor(j) && !j.state().isFinal();
              });
    } catch (RuntimeException e) {
      requested = true;
      throw e;
    }
    lastTook = Duration.ofNanos(System.nanoTime() - began);
    tableSize = inTable[0];
    lastListing = now;
    Instant at = clock.instant();
    Set<Long> seen = new HashSet<>();
    Set<Long> seenImpostors = new HashSet<>();
    for (SlurmJob j : listing) {
      if (who.impostor(j) && !j.state().isFinal()) { // an ended copy can do no harm
        seenImpostors.add(j.id());
        if (!impostors.contains(j.id())) {
          LOG.warn(
              "placeholder_impostor slurmJob={} slurmUser=\"{}\" claims=\"{}\" action=ignore",
              j.id(),
              printable(j.user()),
              printable(j.comment()));
        }
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
      } else if (!seen.contains(id) && !book.lookingFor(id)) {
        if (j.state().isFinal()) {
          pass.gone(id, at); // ended, then purged (MinJobAge): nothing to confirm by a read
        } else {
          pass.missed(id, at); // live: a second miss in a row says gone
        }
      }
    }
    LOG.debug("slurm_full_listing ours={} impostors={}", seen.size(), seenImpostors.size());
    return seq;
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

  /** Text from Slurm that any user wrote, safe on one log line. */
  private static String printable(String s) {
    String cut = s.length() > 200 ? s.substring(0, 200) + "…" : s;
    return cut.replaceAll("[\\p{Cntrl}\"\\\\]", "?");
  }
}
