package io.kse.slurm;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongFunction;

/**
 * Queues each new placeholder behind ours still pending in its partition, so that Slurm preempts
 * for one of them at a time and the next ones take what that freed.
 *
 * <p>Why: Slurm picks victims for each pending job on its own, and a job that cannot start yet
 * still holds its victims' resources while they complete. Eight 1-GPU placeholders submitted
 * together on a full cluster each took a training job of 8 GPUs (three bursts in six on Slurm
 * 22.05, by hand: docs/preemption.md), and then all started on the first victim's node. Slurm
 * preempts at submission only for a job no pending job of higher priority is ahead of, and its
 * scheduling pass preempts for one job of a partition at a time; so a placeholder submitted while
 * ours pend in its partition is sent one step behind the last of them ({@link
 * JobSubmission#behind}: one more nice, or one less explicit priority), and submissions to one
 * partition are sent one at a time, so that a step is never overtaken on the wire. With no
 * placeholder of ours pending there, a submission goes at its policy's priority, as before.
 */
public final class SubmissionOrder {
  /** Steps stop growing here: a queue this deep is ordered enough, and priority keeps its tier. */
  public static final int MAX_STEP = 1_000;

  /**
   * How long a submitted job Slurm's state has not shown yet still counts as pending (the cache
   * reads a new job within a pass or two; a job it never shows is gone).
   */
  static final Duration UNSEEN = Duration.ofSeconds(60);

  private record Queued(String partition, int step, Instant at) {}

  private final Map<Long, Queued> queued = new HashMap<>();
  private final Map<String, Object> lanes = new ConcurrentHashMap<>();
  private final LongFunction<Optional<JobState>> observed;
  private final Clock clock;

  /**
   * @param observed what Slurm last said of a job's state (the cache's snapshot); empty when it has
   *     not said yet
   */
  public SubmissionOrder(LongFunction<Optional<JobState>> observed, Clock clock) {
    this.observed = observed;
    this.clock = clock;
  }

  /** What a submission went as: the job and its step behind ours pending. */
  public record Sent(long jobId, int step) {}

  /** Submits {@code s} behind ours pending in its partition; never retried (as submit). */
  public Sent submit(JobSubmission s, SlurmClient slurm) {
    String partition = s.partition().orElse("");
    synchronized (lanes.computeIfAbsent(partition, k -> new Object())) {
      int step = nextStep(partition);
      long id = slurm.submit(s.behind(step));
      synchronized (queued) {
        queued.put(id, new Queued(partition, step, clock.instant()));
      }
      return new Sent(id, step);
    }
  }

  /** One behind the last of ours pending in {@code partition}; 0 when none is. */
  int nextStep(String partition) {
    Instant unseenSince = clock.instant().minus(UNSEEN);
    synchronized (queued) {
      queued
          .entrySet()
          .removeIf(
              e ->
                  observed
                      .apply(e.getKey())
                      .map(state -> state != JobState.PENDING)
                      .orElse(e.getValue().at().isBefore(unseenSince)));
      return queued.values().stream()
          .filter(q -> q.partition().equals(partition))
          .mapToInt(q -> Math.min(MAX_STEP, q.step() + 1))
          .max()
          .orElse(0);
    }
  }

  /** Ours counted as pending (tests, metrics). */
  public int pending() {
    synchronized (queued) {
      return queued.size();
    }
  }
}
