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

  /**
   * The state slurmrestd reports as one word or as a list (the base state and its flags). A flag
   * alone stands for the base state it implies: Slurm 22.05's {@code job_state} is a single word in
   * which a flag wins over the base state, so a running job whose prolog runs reads {@code
   * CONFIGURING}; taken as unknown, a bound pod's placeholder would look as if it had lost its
   * node.
   */
  public static JobState reported(java.util.List<String> words) {
    for (String w : words) {
      JobState base = parse(w);
      if (base != UNKNOWN) {
        return base;
      }
    }
    return words.stream()
        .map(JobState::impliedByFlag)
        .filter(s -> s != UNKNOWN)
        .findFirst()
        .orElse(UNKNOWN);
  }

  /** Per Slurm's job_mgr.c and agent.c (22.05 … 26.05): where each flag is ever set. */
  private static JobState impliedByFlag(String flag) {
    return switch (flag.trim().toUpperCase(Locale.ROOT)) {
      // set only on running jobs: node boot or PrologSlurmctld, a resize, SIGSTOP/SIGCONT
      case "CONFIGURING", "RESIZING", "SIGNALING", "STOPPED" -> RUNNING;
      // requeued or held after a requeue or special exit, or its reservation deleted: waits again
      case "REQUEUED", "REQUEUE_FED", "REQUEUE_HOLD", "SPECIAL_EXIT", "RESV_DEL_HOLD" -> PENDING;
      // ended, staging its files out
      case "STAGE_OUT" -> COMPLETING;
      // a federation sibling withdrawn
      case "REVOKED" -> CANCELLED;
      default -> UNKNOWN;
    };
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
