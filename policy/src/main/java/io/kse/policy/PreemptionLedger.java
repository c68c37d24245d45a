package io.kse.policy;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * How much each tier preempted recently, for preemption budgets. In memory, no clock of its own:
 * callers pass the time. Entries older than the longest window asked about are dropped. A charge
 * names its victim and the run it lost, so the same preemption restored from a saved copy and
 * observed again is counted once, and a job preempted again after its requeue is charged again.
 */
public final class PreemptionLedger {
  /** Totals within a window. */
  public record Usage(long gpus, long nodes) {}

  /**
   * One preemption charged to a tier: the victim's GPUs and nodes, when, which Slurm job it was
   * ({@code victimJob} 0: not known, never merged with another) and which of its runs (its restart
   * count once it lost the run: each requeue counts one more).
   */
  public record Charge(
      String tier, long gpus, long nodes, Instant at, long victimJob, int victimRun) {
    /** A charge of the victim's first run. */
    public Charge(String tier, long gpus, long nodes, Instant at, long victimJob) {
      this(tier, gpus, nodes, at, victimJob, 0);
    }

    /** The preemption it stands for: one victim's one run. */
    String preemption() {
      return victimJob + "#" + victimRun;
    }
  }

  private final Map<String, Deque<Charge>> byTier = new HashMap<>();
  private final Set<String> victims = new HashSet<>();
  private long version;

  /** Grows with every charge added: whether there is anything new to save. */
  public synchronized long version() {
    return version;
  }

  /** Records that a placeholder of {@code tier} preempted jobs holding these resources. */
  public synchronized void record(String tier, long gpus, long nodes, Instant at) {
    add(new Charge(tier, gpus, nodes, at, 0));
  }

  /**
   * Records that a placeholder of {@code tier} preempted Slurm job {@code victimJob}; false when
   * that victim is charged already.
   */
  public synchronized boolean record(
      String tier, long gpus, long nodes, Instant at, long victimJob) {
    return add(new Charge(tier, gpus, nodes, at, victimJob));
  }

  /**
   * Records that a placeholder of {@code tier} took run {@code victimRun} of Slurm job {@code
   * victimJob}; false when that run is charged already.
   */
  public synchronized boolean record(
      String tier, long gpus, long nodes, Instant at, long victimJob, int victimRun) {
    return add(new Charge(tier, gpus, nodes, at, victimJob, victimRun));
  }

  /**
   * Adds saved charges this ledger does not hold yet (by victim; one without a victim when no equal
   * one is held), so restoring the same copy twice adds nothing; how many were new.
   */
  public synchronized int restore(Collection<Charge> saved) {
    int added = 0;
    for (Charge c : saved) { // add keeps each tier's queue in time order
      boolean held =
          c.victimJob() == 0 && byTier.getOrDefault(c.tier(), new ArrayDeque<>()).contains(c);
      if (!held && add(c)) {
        added++;
      }
    }
    return added;
  }

  /** The charges made within {@code keep} before {@code now}, oldest first: what to save. */
  public synchronized List<Charge> charges(Instant now, Duration keep) {
    Instant from = now.minus(keep);
    List<Charge> out = new ArrayList<>();
    byTier.values().forEach(q -> q.stream().filter(c -> !c.at().isBefore(from)).forEach(out::add));
    out.sort(Comparator.comparing(Charge::at));
    return out;
  }

  public synchronized Usage usage(String tier, Duration window, Instant now) {
    Deque<Charge> q = byTier.get(tier);
    if (q == null) {
      return new Usage(0, 0);
    }
    Instant from = now.minus(window);
    while (!q.isEmpty() && q.peekFirst().at().isBefore(from)) {
      Charge gone = q.pollFirst();
      victims.remove(gone.preemption());
    }
    long g = 0;
    long n = 0;
    for (Charge e : q) {
      g += e.gpus();
      n += e.nodes();
    }
    return new Usage(g, n);
  }

  private boolean add(Charge c) {
    if (c.victimJob() != 0 && !victims.add(c.preemption())) {
      return false;
    }
    version++;
    Deque<Charge> q = byTier.computeIfAbsent(c.tier(), t -> new ArrayDeque<>());
    if (q.isEmpty() || !q.peekLast().at().isAfter(c.at())) {
      q.addLast(c);
    } else { // an older charge restored after newer ones: keep the queue in time order
      List<Charge> all = new ArrayList<>(q);
      all.add(c);
      all.sort(Comparator.comparing(Charge::at));
      q.clear();
      q.addAll(all);
    }
    return true;
  }
}
