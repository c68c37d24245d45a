package io.kse.slurm.cache;

import io.kse.slurm.JobState;
import io.kse.slurm.PlaceholderOwner;
import io.kse.slurm.SlurmClient;
import io.kse.slurm.SlurmJob;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Other users' jobs that Slurm's end hook named while a placeholder of ours might have preempted
 * them: each is read once it settled and, if it lost its run, reported as the change from that run
 * (the preemption's victim). The one thing the cache needs of other users' jobs, without keeping
 * any.
 */
final class EndHints {
  private static final Logger LOG = LoggerFactory.getLogger(EndHints.class);

  /** How long an end hint of another user's job waits for that job to settle. */
  static final Duration TTL = Duration.ofSeconds(60);

  /** Hints kept at once, at most: in a flood of ends the rest is not worth a read. */
  static final int MAX = 10_000;

  private record Hint(List<String> nodes, Instant at) {}

  private final SlurmClient client;
  private final Clock clock;
  private final Map<Long, Hint> hints = new ConcurrentHashMap<>();

  EndHints(SlurmClient client, Clock clock) {
    this.client = client;
    this.clock = clock;
  }

  /**
   * Keeps the hint if a placeholder of ours may have preempted the job; else one lookup, no more.
   */
  void ended(long jobId, List<String> nodes, boolean mayBeForUs) {
    if (nodes.isEmpty() || !mayBeForUs) {
      LOG.debug("end_hint_ignored slurmJob={} nodes={}", jobId, nodes);
      return;
    }
    if (hints.size() < MAX) {
      hints.put(jobId, new Hint(List.copyOf(nodes), clock.instant()));
      LOG.debug("end_hint_kept slurmJob={} nodes={}", jobId, nodes);
    }
  }

  /** A placeholder of ours is looked for, pends, or started within {@link #TTL}. */
  static boolean mayBePreemptedForUs(Collection<SlurmJob> ours, boolean lookingFor, Instant now) {
    if (lookingFor) {
      return true;
    }
    Instant recent = now.minus(TTL);
    for (SlurmJob j : ours) {
      if (j.state() == JobState.PENDING
          || j.isAllocated() && j.startTime().map(t -> t.isAfter(recent)).orElse(true)) {
        return true;
      }
    }
    return false;
  }

  /**
   * Reads the hinted jobs (at most {@code maxReads}); returns the lost runs found. A job Slurm does
   * not answer for is looked at again until its hint's time is up: slurmctld may not answer for a
   * job it is requeuing at that instant.
   */
  List<JobChange> read(PlaceholderOwner owner, int maxReads, Instant now) {
    List<JobChange> lost = new ArrayList<>();
    int n = 0;
    for (Map.Entry<Long, Hint> e : List.copyOf(hints.entrySet())) {
      long id = e.getKey();
      Hint hint = e.getValue();
      if (OurJobs.ago(hint.at(), now).compareTo(TTL) > 0) {
        hints.remove(id); // never settled: not worth a read any more
        continue;
      }
      if (n++ >= maxReads) {
        continue; // the rest next pass
      }
      Optional<SlurmJob> j = client.job(id);
      Instant at = clock.instant();
      if (j.isEmpty()) {
        LOG.debug("end_hint_job_not_found slurmJob={}", id);
        continue;
      }
      if (owner.tagOf(j.get()).isPresent()) {
        hints.remove(id); // ours after all (the checks follow ours)
        continue;
      }
      SlurmJob after = j.get();
      boolean lostRun =
          after.state() == JobState.PREEMPTED
              || after.state() == JobState.PENDING && after.restartCount() > 0;
      LOG.debug(
          "end_hint_read slurmJob={} state={} restarts={} start={} lostRun={}",
          id,
          after.state(),
          after.restartCount(),
          after.startTime().orElse(null),
          lostRun);
      if (lostRun) {
        lost.add(
            new JobChange(Optional.of(after.runBefore(hint.nodes(), at)), Optional.of(after), at));
        hints.remove(id);
      } else if (after.state() != JobState.COMPLETING) {
        hints.remove(id); // ended on its own, or already running again
      }
    }
    return lost;
  }
}
