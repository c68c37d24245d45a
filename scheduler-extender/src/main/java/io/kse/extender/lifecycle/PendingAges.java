package io.kse.extender.lifecycle;

import io.kse.slurm.JobState;
import io.kse.slurm.SlurmJob;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.LongFunction;

/**
 * How long each tier's oldest placeholder has waited for Slurm: the figure an on-call engineer
 * alerts on when inference waits longer than its tier should.
 */
public final class PendingAges {
  private PendingAges() {}

  /**
   * Seconds since submission of the oldest placeholder Slurm has pending, by tier. A job the cache
   * does not know yet is left out: it was submitted moments ago or has gone, and neither is a wait.
   */
  public static Map<String, Double> oldestByTier(
      Collection<PlaceholderState> states, LongFunction<Optional<SlurmJob>> jobs, Instant now) {
    Map<String, Double> out = new TreeMap<>();
    for (PlaceholderState s : states) {
      if (s instanceof PlaceholderState.Submitted sub
          && jobs.apply(sub.jobId()).map(j -> j.state() == JobState.PENDING).orElse(false)) {
        double waited = Math.max(0, Duration.between(sub.at(), now).toMillis() / 1000.0);
        out.merge(sub.tier(), waited, Math::max);
      }
    }
    return out;
  }
}
