package io.kse.slurm.cache;

import io.kse.slurm.SlurmJob;
import java.time.Instant;
import java.util.Optional;

/**
 * A job as the cache saw it change between two polls. {@code before} is empty for a new job; {@code
 * after} is empty for a job gone from Slurm (confirmed by two full listings in a row).
 */
public record JobChange(Optional<SlurmJob> before, Optional<SlurmJob> after, Instant observedAt) {

  public long jobId() {
    return after.or(() -> before).orElseThrow().id();
  }

  public boolean isNew() {
    return before.isEmpty();
  }

  /** True when the job went from not running to running (first start or restart after requeue). */
  public boolean started() {
    return after.map(SlurmJob::isAllocated).orElse(false)
        && !before.map(SlurmJob::isAllocated).orElse(false);
  }
}
