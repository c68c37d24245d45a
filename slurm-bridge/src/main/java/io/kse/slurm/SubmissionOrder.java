package io.kse.slurm;

import io.kse.slurm.cache.Snapshot;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * Keeps one of our placeholders at a time waiting in Slurm's queue per partition: the others wait
 * behind it held, so that Slurm preempts for one of them and the next ones take what that freed.
 *
 * <p>Why: Slurm picks victims for each pending job on its own. Its backfill scheduler reserves
 * whole nodes for each pending job it cannot start, and preempts for each: eight 1-GPU placeholders
 * pending together on a full cluster took a training job of 8 GPUs each, then all started on the
 * first victim's node (22.05 with DebugFlags=Backfill: "planned start of JobId=153 failed" after
 * each preemption; docs/preemption.md). Its main scheduler stops at the first job of a partition
 * that cannot start, and a held job (priority 0) is seen by neither. So a placeholder submitted
 * while another of ours pends in its partition goes in held ({@link #submit}); a held one is
 * released once none of ours pends unheld there ({@link #leader} empty: the leader started, ended,
 * or has waited {@link #LEADER_WAIT}); and of several pending unheld (released together, some did
 * not fit) all but the oldest are held again. The extender's reconciler applies the last two on
 * every pass, so the order converges on what Slurm shows, whatever was seen before.
 */
public final class SubmissionOrder {
  /**
   * How long a leader holds the ones behind it back: it may wait for capacity no preemption frees
   * (nothing preemptible, another shape), where a smaller placeholder behind it could start.
   */
  public static final Duration LEADER_WAIT = Duration.ofSeconds(60);

  /**
   * How long a submitted job Slurm's state has not shown yet still counts (the cache reads a new
   * job within a pass or two; a job it never shows is gone).
   */
  static final Duration UNSEEN = Duration.ofSeconds(60);

  /** Slurm's reasons for a held job: a user's hold, or an operator's (our token may be one). */
  static final Set<String> HELD = Set.of("JobHeldUser", "JobHeldAdmin");

  /** A submission Slurm has not shown yet; {@code leads} when others wait behind it. */
  private record Unseen(String partition, boolean leads, Instant at) {}

  /** Submitted by this replica and not shown by Slurm's state yet. */
  private final Map<Long, Unseen> unseen = new HashMap<>();

  /**
   * When this replica released a held job: its wait as a leader counts from then, not from its
   * submission (after a restart, from its submission: it then leads for less long, no worse).
   */
  private final Map<Long, Instant> releasedAt = new HashMap<>();

  /**
   * The explicit priority each placeholder was submitted with: Slurm forgets it when the job is
   * held (priority 0) and computes a new one on release (22.05, by hand: 12345 held, 5000
   * released), so a release sets it again (an update of the priority releases a held job).
   */
  private final Map<Long, Long> explicitPriority = new HashMap<>();

  private final Map<String, Object> lanes = new ConcurrentHashMap<>();
  private final Supplier<Snapshot> slurm;
  private final java.util.function.Predicate<SlurmJob> mayPreempt;
  private final Clock clock;

  /** The oldest pending unheld placeholders per partition of the snapshot last looked at. */
  private Snapshot indexed;

  private Map<String, TreeMap<Long, SlurmJob>> pendingByPartition = Map.of();

  /**
   * @param slurm our placeholders as Slurm last showed them (the cache's snapshot)
   * @param mayPreempt whether a placeholder of ours may make Slurm preempt (its tier may preempt
   *     another): only those wait in order; the others neither wait nor hold anyone back
   */
  public SubmissionOrder(
      Supplier<Snapshot> slurm, java.util.function.Predicate<SlurmJob> mayPreempt, Clock clock) {
    this.slurm = slurm;
    this.mayPreempt = mayPreempt;
    this.clock = clock;
  }

  /** Every placeholder may make Slurm preempt (tests; a replay of one tier). */
  public SubmissionOrder(Supplier<Snapshot> slurm, Clock clock) {
    this(slurm, j -> true, clock);
  }

  /** What a submission went as: the job, and the leader it was held behind if it was. */
  public record Sent(long jobId, OptionalLong heldBehind) {}

  /**
   * Submits {@code s}, held if another of ours pends unheld in its partition; submissions to one
   * partition go one at a time, so that two sent together never both go unheld. Never retried.
   */
  public Sent submit(JobSubmission s, SlurmClient client) {
    return submit(s, client, true);
  }

  /**
   * As {@link #submit(JobSubmission, SlurmClient)}; a placeholder whose tier may preempt nothing
   * ({@code mayPreempt} false) is sent at once, unheld, and holds nobody back.
   */
  public Sent submit(JobSubmission s, SlurmClient client, boolean mayPreempt) {
    if (!mayPreempt) {
      return new Sent(client.submit(s), OptionalLong.empty());
    }
    String partition = s.partition().orElse("");
    synchronized (lanes.computeIfAbsent(partition, k -> new Object())) {
      OptionalLong ahead = leader(partition, 0);
      long id = client.submit(ahead.isPresent() ? s.held() : s);
      synchronized (this) {
        unseen.put(id, new Unseen(partition, ahead.isEmpty(), clock.instant()));
        s.priority().ifPresent(p -> explicitPriority.put(id, p));
      }
      return new Sent(id, ahead);
    }
  }

  /**
   * The placeholder a pending one of ours in {@code partition} waits behind: the oldest of ours
   * pending there and not held, younger than {@link #LEADER_WAIT}, other than {@code self}; empty
   * when there is none (an empty partition name is the cluster's default: any partition).
   */
  public synchronized OptionalLong leader(String partition, long self) {
    Instant now = clock.instant();
    Instant since = now.minus(LEADER_WAIT);
    Snapshot snapshot = slurm.get();
    index(snapshot);
    unseen.entrySet().removeIf(e -> snapshot.job(e.getKey()).isPresent());
    explicitPriority
        .keySet()
        .removeIf(
            id ->
                !unseen.containsKey(id)
                    && snapshot.job(id).map(j -> j.state() != JobState.PENDING).orElse(true));
    unseen.values().removeIf(u -> u.at().isBefore(now.minus(UNSEEN)));
    releasedAt.values().removeIf(t -> t.isBefore(since));
    long best = Long.MAX_VALUE;
    for (Map.Entry<String, TreeMap<Long, SlurmJob>> e : pendingByPartition.entrySet()) {
      if (!partition.isEmpty() && !e.getKey().equals(partition)) {
        continue;
      }
      for (SlurmJob j : e.getValue().values()) {
        Instant waitingSince = releasedAt.getOrDefault(j.id(), j.submitTime());
        if (j.id() != self && !waitingSince.isBefore(since)) {
          best = Math.min(best, j.id());
          break;
        }
      }
    }
    for (Map.Entry<Long, Unseen> e : unseen.entrySet()) {
      Unseen u = e.getValue();
      if (u.leads()
          && e.getKey() != self
          && (partition.isEmpty() || u.partition().isEmpty() || u.partition().equals(partition))
          && !u.at().isBefore(since)) {
        best = Math.min(best, e.getKey());
      }
    }
    return best == Long.MAX_VALUE ? OptionalLong.empty() : OptionalLong.of(best);
  }

  /** What a pending placeholder needs to wait in order. */
  public enum Turn {
    /** As it is: alone in its partition's queue, or held behind a leader. */
    KEEP,
    /** Held with no leader left: release it. */
    RELEASE,
    /** Pending unheld behind an older leader (released together with it): hold it again. */
    HOLD
  }

  /**
   * The one rule, for the extender's reconciler and a policy replay alike: what {@code j}, pending,
   * needs given its {@link #leader} (the other of ours pending unheld in its partition).
   */
  public static Turn turn(SlurmJob j, OptionalLong leader) {
    if (j.state() != JobState.PENDING) {
      return Turn.KEEP;
    }
    boolean held = held(j);
    if (held && leader.isEmpty()) {
      return Turn.RELEASE;
    }
    if (!held && leader.isPresent() && leader.getAsLong() < j.id()) {
      return Turn.HOLD;
    }
    return Turn.KEEP;
  }

  /**
   * What releases held {@code jobId} (its explicit priority again, where it had one), counting its
   * wait as a leader from now.
   */
  public synchronized JobUpdate release(long jobId) {
    releasedAt.put(jobId, clock.instant());
    Long p = explicitPriority.get(jobId);
    return p == null ? JobUpdate.release() : JobUpdate.priority(p);
  }

  /** Whether Slurm shows {@code j} waiting in its queue unheld: a leader, if it is ours. */
  public static boolean waiting(SlurmJob j) {
    return j.state() == JobState.PENDING && !held(j);
  }

  /** Whether Slurm shows {@code j} pending and held (by us, or by hand: both are released). */
  public static boolean held(SlurmJob j) {
    return j.state() == JobState.PENDING && j.priority() == 0 && HELD.contains(j.stateReason());
  }

  private void index(Snapshot snapshot) {
    if (snapshot == indexed) {
      return;
    }
    Map<String, TreeMap<Long, SlurmJob>> byPartition = new HashMap<>();
    for (SlurmJob j : snapshot.jobs().values()) {
      if (waiting(j) && j.placeholder().isPresent() && mayPreempt.test(j)) {
        byPartition.computeIfAbsent(j.partition(), k -> new TreeMap<>()).put(j.id(), j);
      }
    }
    pendingByPartition = byPartition;
    indexed = snapshot;
  }
}
