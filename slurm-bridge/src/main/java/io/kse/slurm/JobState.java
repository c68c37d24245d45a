package io.kse.slurm;

import java.util.Locale;

/** Slurm's base job states, as reported by slurmrestd ({@code job_state}). */
public enum JobState {
  PENDING,
  RUNNING,
  SUSPENDED,
  COMPLETING,
  COMPLETED,
  CANCELLED,
  FAILED,
  TIMEOUT,
  NODE_FAIL,
  PREEMPTED,
  BOOT_FAIL,
  DEADLINE,
  OUT_OF_MEMORY,
  /** A state this bridge does not know; treated as not running and not final. */
  UNKNOWN;

  /** True once the job has ended and will not run again without a requeue. */
  public boolean isFinal() {
    return switch (this) {
      case COMPLETED,
          CANCELLED,
          FAILED,
          TIMEOUT,
          NODE_FAIL,
          PREEMPTED,
          BOOT_FAIL,
          DEADLINE,
          OUT_OF_MEMORY ->
          true;
      default -> false;
    };
  }

  /** True while the job holds its allocation (running, or finishing up on its nodes). */
  public boolean holdsNodes() {
    return this == RUNNING || this == SUSPENDED || this == COMPLETING;
  }

  public static JobState parse(String text) {
    if (text == null || text.isBlank()) {
      return UNKNOWN;
    }
    try {
      return valueOf(text.trim().toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      return UNKNOWN;
    }
  }
}
