package io.kse.slurm.preemption;

import io.kse.slurm.JobState;
import io.kse.slurm.SlurmJob;
import io.kse.slurm.cache.JobChange;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Optional;

/**
 * Slurm preempts on its own; this works out afterwards which placeholder took which job's nodes, so
 * the pod can be told, the budget charged and the preemption counted — in the extender, and the
 * same way in a policy replay (kse-policy replay), so that a replay pairs what production would. A
 * non-placeholder job that lost its allocation is paired with the first placeholder that started on
 * one of its nodes within {@link #WINDOW} (in either order: they usually show up in the same poll),
 * and consumed: a victim is charged once, to one placeholder, however many start on its nodes
 * afterwards.
 *
 * <p>Slurm preempts for each pending job on its own, so a victim's nodes need not be taken by the
 * placeholder it was preempted for (several pending together each took one; their placeholders then
 * all started on the first victim's node). Slurm names the preemptor only in slurmctld's log, not
 * over REST. So a victim no placeholder took within the window is {@link Attribution#INFERRED
 * inferred}: charged to one of our placeholders that was pending when it lost its run — the
 * earliest submitted that was not paired with a victim yet (Slurm preempts for one pending job each
 * time, highest priority first, and our placeholders queue behind each other), else the earliest
 * submitted — so that no preemption made while ours waited goes untold or unbudgeted.
 */
public final class PreemptionTracker {
  /** Jobs not ours, as last seen running (bounded by what runs on the cluster). */
  private final java.util.Map<Long, SlurmJob> lastRun = new java.util.HashMap<>();

  /** How long a victim and a placeholder start wait for each other (either comes first). */
  public static final Duration WINDOW = Duration.ofSeconds(60);

  /** How a victim was tied to its placeholder. */
  public enum Attribution {
    /** The placeholder started on one of the victim's nodes. */
    EXACT,
    /**
     * No placeholder took its nodes; it lost its run while this one of ours was pending (the rule
     * in this class's comment).
     */
    INFERRED;

    /** The metric label and log word. */
    public String label() {
      return name().toLowerCase(java.util.Locale.ROOT);
    }
  }

  /** What is told of a pair found. */
  @FunctionalInterface
  public interface Pairing {
    /**
     * @return false when the pair cannot stand (the policy says the placeholder's tier may not
     *     preempt the victim's): the victim is then left for another placeholder
     */
    boolean pair(SlurmJob placeholder, SlurmJob victim, Attribution how);
  }

  private record Seen(SlurmJob job, Instant at) {}

  /**
   * A placeholder of ours seen pending: from when (its submission) until when it stopped pending
   * (empty while it still is).
   */
  private record Waiting(SlurmJob job, Instant from, Optional<Instant> until) {
    boolean pendingAt(Instant t) {
      return !from.isAfter(t.plus(LOSS_SLACK))
          && until.map(u -> !u.isBefore(t.minus(LOSS_SLACK))).orElse(true);
    }
  }

  private final Deque<Seen> victims = new ArrayDeque<>();
  private final Deque<Seen> starts = new ArrayDeque<>();
  private final java.util.Map<Long, Waiting> waiting = new java.util.LinkedHashMap<>();

  /** Placeholders paired with a victim within the window (each preempts for itself). */
  private final java.util.Map<Long, Instant> paired = new java.util.HashMap<>();

  private final Pairing onPreemption;
  private static final org.slf4j.Logger LOG =
      org.slf4j.LoggerFactory.getLogger(PreemptionTracker.class);

  private final java.util.function.Predicate<SlurmJob> ours;

  /**
   * @param onPreemption called with (placeholder, victim) for every pair found; false when the pair
   *     cannot stand (the policy says the placeholder's tier may not preempt the victim's): the
   *     victim is then left for another placeholder
   * @param ours whether a job is one of our placeholders (a copy of our tag under another Slurm
   *     user is not: it is any other job, and may be a victim)
   */
  public PreemptionTracker(Pairing onPreemption, java.util.function.Predicate<SlurmJob> ours) {
    this(onPreemption, ours, j -> {});
  }

  /**
   * @param unpaired told of a victim no placeholder was paired with within {@link #WINDOW}, exactly
   *     or inferred: none of ours was pending when it lost its run, or the policy refused each
   */
  public PreemptionTracker(
      Pairing onPreemption,
      java.util.function.Predicate<SlurmJob> ours,
      java.util.function.Consumer<SlurmJob> unpaired) {
    this.onPreemption = onPreemption;
    this.ours = ours;
    this.unpaired = unpaired;
  }

  private final java.util.function.Consumer<SlurmJob> unpaired;

  /** A tracker that takes every job with our tag for a placeholder (tests). */
  public PreemptionTracker(Pairing onPreemption) {
    this(onPreemption, j -> j.placeholder().isPresent());
  }

  /**
   * The victims seen losing their run that no placeholder took, attributed now as the window's end
   * would (inferred, else returned): at the end of a policy replay, the preemptions it cannot
   * attribute (none of ours was pending, or every pairing was refused).
   */
  public synchronized List<SlurmJob> takeUnpaired() {
    List<SlurmJob> out = new ArrayList<>();
    while (!victims.isEmpty()) {
      Seen v = victims.pollFirst();
      if (!inferred(v)) {
        out.add(v.job());
      }
    }
    return out;
  }

  /** Feeds one job change (the cache's poller thread). */
  public synchronized void observe(JobChange c) {
    Instant now = c.observedAt();
    expire(now);
    if (c.after().isEmpty()) {
      c.before()
          .ifPresent(
              b -> {
                lastRun.remove(b.id());
                waiting.computeIfPresent(
                    b.id(),
                    (id, w) ->
                        w.until().isPresent()
                            ? w
                            : new Waiting(w.job(), w.from(), Optional.of(now)));
              });
      return;
    }
    SlurmJob after = c.after().get();
    boolean placeholder = ours.test(after);
    if (placeholder) {
      waiting(c, after, now);
    }
    if (LOG.isDebugEnabled()) {
      LOG.debug(
          "job_change slurmJob={} placeholder={} before={} after={} started={} lost={}",
          after.id(),
          placeholder,
          c.before()
              .map(
                  j ->
                      j.state()
                          + "@"
                          + j.nodes()
                          + "/r"
                          + j.restartCount()
                          + "/s"
                          + j.startTime().orElse(null))
              .orElse("-"),
          after.state()
              + "@"
              + after.nodes()
              + "/r"
              + after.restartCount()
              + "/s"
              + after.startTime().orElse(null),
          c.started(),
          !placeholder && lostAllocation(c));
    }
    if (placeholder && c.started()) {
      victims.removeIf(
          v -> pair(after, v.job(), now)); // each victim consumed by its one placeholder
      starts.add(new Seen(after, now));
    } else if (placeholder
        && c.before().map(SlurmJob::isAllocated).orElse(false)
        && !after.isAllocated()) {
      // a placeholder that ended takes nothing from jobs that lose their nodes later
      starts.removeIf(s -> s.job().id() == after.id());
    } else if (!placeholder) {
      observeOther(c, after, now);
    }
  }

  /**
   * A job that is not ours: remember its last running state, so that losing its nodes is seen even
   * when a poll caught it in between (RUNNING → COMPLETING → PENDING with one more restart: no
   * single change goes from running to requeued).
   */
  private void observeOther(JobChange c, SlurmJob after, Instant now) {
    if (after.isAllocated() && after.state() != JobState.COMPLETING) {
      lastRun.put(after.id(), after);
      return;
    }
    SlurmJob run =
        c.before()
            .filter(b -> b.isAllocated() && b.state() != JobState.COMPLETING)
            .orElse(lastRun.get(after.id()));
    boolean lost =
        run != null
            && (after.state() == JobState.PREEMPTED
                || after.restartCount() > run.restartCount()
                    && !after.isAllocated()
                    && !after.state().isFinal());
    if (lost) {
      lastRun.remove(after.id());
      // the victim's nodes and start are only in the state before it lost them
      SlurmJob victim = asRun(after, run);
      // the placeholder that took its node: the earliest started of those that share one
      Optional<Seen> taker =
          starts.stream()
              .filter(s -> shares(s.job(), victim))
              .min(
                  java.util.Comparator.comparing(
                      (Seen s) -> s.job().startTime().orElse(Instant.MAX)));
      if (taker.isEmpty() || !pair(taker.get().job(), victim, now)) {
        victims.add(new Seen(victim, now));
      }
    } else if (after.state().isFinal()) {
      lastRun.remove(after.id());
    }
  }

  /** Keeps when each placeholder of ours was pending, for victims no placeholder takes. */
  private void waiting(JobChange c, SlurmJob after, Instant now) {
    boolean pendingBefore = c.before().map(b -> b.state() == JobState.PENDING).orElse(false);
    if (after.state() == JobState.PENDING) {
      Instant from = after.submitTime().isAfter(Instant.EPOCH) ? after.submitTime() : now;
      waiting.putIfAbsent(after.id(), new Waiting(after, from, Optional.empty()));
    } else if (pendingBefore || waiting.containsKey(after.id())) {
      Waiting w = waiting.get(after.id());
      Instant from =
          w != null
              ? w.from()
              : after.submitTime().isAfter(Instant.EPOCH) ? after.submitTime() : now;
      if (w == null || w.until().isEmpty()) {
        waiting.put(after.id(), new Waiting(after, from, Optional.of(now)));
      }
    }
  }

  /**
   * Charges a victim no placeholder took to one of ours pending when it lost its run (the rule in
   * the class comment); false when none was, or the policy refused every one.
   */
  private boolean inferred(Seen v) {
    SlurmJob victim = v.job();
    Instant lost = lostAt(victim).orElse(v.at());
    List<Waiting> candidates =
        waiting.values().stream()
            .filter(w -> w.pendingAt(lost) || w.pendingAt(v.at()))
            .sorted(
                java.util.Comparator.comparing((Waiting w) -> paired.containsKey(w.job().id()))
                    .thenComparing(Waiting::from)
                    .thenComparingLong(w -> w.job().id()))
            .toList();
    for (Waiting w : candidates) {
      if (onPreemption.pair(w.job(), victim, Attribution.INFERRED)) {
        paired.put(w.job().id(), v.at());
        return true;
      }
    }
    return false;
  }

  static boolean lostAllocation(JobChange c) {
    if (c.before().isEmpty() || !c.before().get().isAllocated()) {
      return false;
    }
    SlurmJob a = c.after().get();
    return a.state() == JobState.PREEMPTED
        || a.state() == JobState.PENDING && a.restartCount() > c.before().get().restartCount();
  }

  /**
   * Whether the placeholder took one of the victim's nodes: it started there after the victim did,
   * and not well before the victim lost its run. A placeholder already running beside the victim
   * (one node's GPUs shared) took nothing from it — the soak found such a neighbour charged with
   * the preemption another placeholder made.
   */
  private static boolean shares(SlurmJob placeholder, SlurmJob victim) {
    List<String> shared = new ArrayList<>(placeholder.nodes());
    shared.retainAll(victim.nodes());
    if (shared.isEmpty() || victim.startTime().isEmpty() || placeholder.startTime().isEmpty()) {
      return false;
    }
    Instant started = placeholder.startTime().get();
    return !victim.startTime().get().isAfter(started)
        && lostAt(victim).map(l -> !started.isBefore(l.minus(LOSS_SLACK))).orElse(true);
  }

  /** Slurm's clock is in whole seconds, and a requeue is stamped once the job has completed. */
  static final Duration LOSS_SLACK = Duration.ofSeconds(5);

  /**
   * When Slurm says the victim lost its run: a PREEMPTED job's end, or a requeued job's new submit
   * time (batch_requeue_fini stamps it; seen while still completing, it is the old one, earlier
   * than the run, and excludes nothing). Empty when Slurm says neither.
   */
  private static Optional<Instant> lostAt(SlurmJob victim) {
    if (victim.state() == JobState.PREEMPTED) {
      return victim.endTime();
    }
    return victim.restartCount() > 0 && victim.submitTime().isAfter(Instant.EPOCH)
        ? Optional.of(victim.submitTime())
        : Optional.empty();
  }

  /**
   * Pairs them if they fit; true when paired. A victim is charged once because it is consumed: a
   * paired victim is never kept in {@code victims}, and a job is seen losing a run only once.
   */
  private boolean pair(SlurmJob placeholder, SlurmJob victim, Instant now) {
    if (shares(placeholder, victim) && onPreemption.pair(placeholder, victim, Attribution.EXACT)) {
      paired.put(placeholder.id(), now);
      return true;
    }
    return false;
  }

  private void expire(Instant now) {
    Instant cutoff = now.minus(WINDOW);
    while (!victims.isEmpty() && victims.peekFirst().at().isBefore(cutoff)) {
      Seen v = victims.pollFirst();
      if (!inferred(v)) {
        unpaired.accept(v.job());
      }
    }
    while (!starts.isEmpty() && starts.peekFirst().at().isBefore(cutoff)) {
      starts.pollFirst();
    }
    // a placeholder that stopped pending a window ago can be no later victim's preemptor
    Instant older = cutoff.minus(WINDOW);
    waiting.values().removeIf(w -> w.until().map(u -> u.isBefore(older)).orElse(false));
    paired.values().removeIf(t -> t.isBefore(older));
  }

  /** The job's new state, with the nodes and start time of the run it lost. */
  private static SlurmJob asRun(SlurmJob after, SlurmJob run) {
    return new SlurmJob(
        after.id(),
        after.name(),
        after.comment(),
        after.state(),
        after.stateReason(),
        after.partition(),
        after.qos(),
        run.nodes(),
        run.nodes().size(),
        after.submitTime(),
        run.startTime(),
        after.endTime(),
        after.restartCount(),
        after.tresPerNode(),
        after.features(),
        after.priority(),
        after.lastChange());
  }
}
