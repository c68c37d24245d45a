package io.kse.slurm;

import java.time.Instant;
import java.util.List;

/**
 * The answer to "jobs changed since T": either unchanged (Slurm answered 304 / no change), or the
 * complete current job list. slurmctld answers {@code update_time} queries all-or-nothing.
 *
 * @param changed false when nothing changed since the given time; {@code jobs} is then empty
 * @param asOf the time to pass as "since" in the next call
 */
public record JobListing(boolean changed, List<SlurmJob> jobs, Instant asOf) {
  public JobListing {
    jobs = List.copyOf(jobs);
  }

  public static JobListing unchanged(Instant asOf) {
    return new JobListing(false, List.of(), asOf);
  }
}
