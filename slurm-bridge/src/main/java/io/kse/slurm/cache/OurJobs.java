package io.kse.slurm.cache;

import io.kse.slurm.SlurmJob;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The cache's bookkeeping of our jobs, apart from what Slurm said of them: which ones it is looking
 * for, when each was last read or checked, which missed once, which we are cancelling, which names
 * were dismissed. The pass plan reads it; a pass writes it.
 *
 * <p>Two kinds of jobs are looked for. Ones we made or changed are ours for sure and read every
 * pass until seen. Ones a hint named are only names (a hook, or a pod's annotation, can name
 * anything): at most {@link #MAX_HINTED} are looked for at once and the plan reads a few of them a
 * pass, so a flood of names Slurm does not have costs bounded reads and never delays our own.
 *
 * <p>Marks from other threads (looked for, hot, dismissed, cancelling) are concurrent maps; the
 * read and check times, the first misses and the read order are written only under the pass lock.
 */
final class OurJobs {
  /** A job that changed is checked every pass for this long: more changes usually follow. */
  static final Duration HOT_AFTER_CHANGE = Duration.ofSeconds(10);

  /**
   * How long after Slurm's last allocation hint its hooks count as delivering: meanwhile, on
   * slurmrestd without batched state checks (22.05), a live job that changed is not read every pass
   * — its start and end come by hook — but at its cadence (pending or running).
   */
  static final Duration HOOKS_DELIVER_FOR = Duration.ofMinutes(10);

  /** How long a dismissed job is not looked for again. */
  static final Duration DISMISSED_FOR = Duration.ofMinutes(10);

  /**
   * Names from hints looked for at once, at most: past this a hint is dropped (listings find it).
   */
  static final int MAX_HINTED = 1024;

  /**
   * Dismissed names remembered, at most: past this the memory starts again (a read each, worst).
   */
  static final int MAX_DISMISSED = 10_000;

  /** A cancel we sent is remembered this long at most, if the job is never seen ended. */
  static final Duration CANCEL_REMEMBERED = Duration.ofHours(1);

  private final Set<Long> made = ConcurrentHashMap.newKeySet();
  private final Set<Long> hinted = ConcurrentHashMap.newKeySet();
  private final Set<Long> named = ConcurrentHashMap.newKeySet();
  private final Map<Long, Instant> hotUntil = new ConcurrentHashMap<>();
  private final Map<Long, Instant> dismissed = new ConcurrentHashMap<>();
  private final Map<Long, Instant> cancelled = new ConcurrentHashMap<>();
  private final Set<Long> cancelsChanged = ConcurrentHashMap.newKeySet();
  private volatile Instant lastAllocationHint = Instant.EPOCH;
  private final AtomicLong reads = new AtomicLong();

  // written under the pass lock; read by other threads too (when a job's state was last confirmed)
  private final Map<Long, Instant> lastRead = new ConcurrentHashMap<>();
  private final Map<Long, Instant> lastStateCheck = new ConcurrentHashMap<>();

  // under the pass lock
  private final Set<Long> missingOnce = new HashSet<>();
  private final Map<Long, Long> appliedRead = new HashMap<>();

  /** We made or changed this job: looked for until seen, and checked every pass for a while. */
  void madeOrChanged(long id, boolean known, Instant now) {
    if (!known) {
      made.add(id);
    }
    hotUntil.put(id, now.plus(HOT_AFTER_CHANGE));
  }

  /**
   * A hint named this job: looked for (within {@link #MAX_HINTED}) until read, and hot; a job the
   * cache holds is read first in the next pass ({@link #named}). Returns whether the cache now
   * knows or looks for it.
   */
  boolean hinted(long id, boolean known, Instant now) {
    if (known) {
      named.add(id);
    } else if (!made.contains(id)) {
      if (hinted.size() >= MAX_HINTED) {
        return false;
      }
      hinted.add(id);
    }
    hotUntil.put(id, now.plus(HOT_AFTER_CHANGE));
    return true;
  }

  void allocationHinted(Instant now) {
    lastAllocationHint = now;
  }

  /** Slurm's allocation hooks were heard lately ({@link #HOOKS_DELIVER_FOR}). */
  boolean hooksDeliver(Instant now) {
    return ago(lastAllocationHint, now).compareTo(HOOKS_DELIVER_FOR) < 0;
  }

  boolean lookingFor(long id) {
    return made.contains(id) || hinted.contains(id);
  }

  boolean anyLookedFor() {
    return !made.isEmpty() || !hinted.isEmpty();
  }

  /** Jobs we made and look for: read every pass until seen. */
  Set<Long> made() {
    return Set.copyOf(made);
  }

  /**
   * Jobs the cache holds that an allocation hint named since their last read: Slurm just started
   * them, so they are read before the other hot ones (in a burst, hundreds of pending placeholders
   * are hot, and a pass reads only {@code maxReads} of them).
   */
  boolean named(long id) {
    return named.contains(id);
  }

  /** Names from hints that are looked for: read a few a pass. */
  Set<Long> hinted() {
    return Set.copyOf(hinted);
  }

  /** These were seen (kept or dropped): no longer looked for. Called once the pass is published. */
  void found(Collection<Long> ids) {
    made.removeAll(ids);
    hinted.removeAll(ids);
  }

  /** No longer looked for; whether it was. */
  boolean stopLooking(long id) {
    return made.remove(id) | hinted.remove(id);
  }

  boolean hot(long id, Instant now) {
    return hotUntil.getOrDefault(id, Instant.EPOCH).isAfter(now);
  }

  void heat(long id, Instant now) {
    hotUntil.put(id, now.plus(HOT_AFTER_CHANGE));
  }

  Instant lastRead(long id) {
    return lastRead.get(id);
  }

  Instant lastStateCheck(long id) {
    return lastStateCheck.getOrDefault(id, Instant.EPOCH);
  }

  void read(long id, Instant at) {
    lastRead.put(id, at);
    named.remove(id);
  }

  /** When Slurm last told us this job's state (a read or a state check); EPOCH if never. */
  Instant confirmed(long id) {
    Instant read = lastRead.getOrDefault(id, Instant.EPOCH);
    Instant checked = lastStateCheck(id);
    return read.isAfter(checked) ? read : checked;
  }

  void stateChecked(long id, Instant at) {
    lastStateCheck.put(id, at);
  }

  boolean missingOnce(long id) {
    return missingOnce.contains(id);
  }

  /** Slurm did not have the job: true on the second miss in a row (gone), else noted. */
  boolean secondMiss(long id, Instant at) {
    if (missingOnce.remove(id)) {
      return true;
    }
    missingOnce.add(id);
    heat(id, at);
    return false;
  }

  void seen(long id) {
    missingOnce.remove(id);
  }

  /** The job is no longer Slurm's: nothing more to remember of it. */
  void forget(long id) {
    missingOnce.remove(id);
    hotUntil.remove(id);
    named.remove(id);
    lastRead.remove(id);
    lastStateCheck.remove(id);
    appliedRead.remove(id);
  }

  /**
   * A number for a read about to begin: a read's answer is applied only if no read of the same job
   * that began later was applied first ({@link #newest}), so a slow answer never replaces a newer.
   */
  long beginRead() {
    return reads.incrementAndGet();
  }

  /** Whether the read numbered {@code seq} is the newest of this job so far; if so, it counts. */
  boolean newest(long id, long seq) {
    Long before = appliedRead.get(id);
    if (before != null && before > seq) {
      return false;
    }
    appliedRead.put(id, seq);
    return true;
  }

  void dismiss(long id, Instant at) {
    if (dismissed.size() >= MAX_DISMISSED) {
      dismissed.clear();
    }
    dismissed.put(id, at);
  }

  boolean dismissed(long id, Instant now) {
    Instant at = dismissed.get(id);
    return at != null && now.isBefore(at.plus(DISMISSED_FOR));
  }

  /** We asked Slurm to cancel this job: of two under one key it is never the one kept. */
  void cancelling(long id, Instant at) {
    cancelled.put(id, at);
    cancelsChanged.add(id);
  }

  boolean isCancelling(long id) {
    return cancelled.containsKey(id);
  }

  /** The jobs sent a cancel since the last call: their keys in the placement index are redone. */
  Set<Long> takeCancelsChanged() {
    Set<Long> sent = new HashSet<>();
    for (Long id : cancelsChanged) {
      if (cancelsChanged.remove(id)) {
        sent.add(id);
      }
    }
    return sent;
  }

  /** Cancels of jobs now seen ended, or sent long ago, are forgotten; returns their jobs. */
  Set<Long> forgetCancels(Map<Long, SlurmJob> jobs, Instant now) {
    Instant before = now.minus(CANCEL_REMEMBERED);
    Set<Long> forgotten = new HashSet<>();
    cancelled
        .entrySet()
        .removeIf(
            e -> {
              SlurmJob j = jobs.get(e.getKey());
              boolean forget = j != null && j.state().isFinal() || e.getValue().isBefore(before);
              if (forget) {
                forgotten.add(e.getKey());
              }
              return forget;
            });
    return forgotten;
  }

  static Duration ago(Instant then, Instant now) {
    return then == null ? Duration.ofDays(365) : Duration.between(then, now);
  }
}
