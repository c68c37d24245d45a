package io.kse.slurm;

import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;

/**
 * Changes to a (usually pending) job. Empty fields are left alone. Releasing a held job is {@code
 * hold = false}.
 */
public record JobUpdate(
    Optional<Boolean> hold,
    OptionalInt nice,
    OptionalLong priority,
    OptionalInt timeLimitMinutes,
    Optional<String> comment,
    Optional<String> qos,
    Optional<String> partition) {

  public JobUpdate {
    if (hold.isEmpty()
        && nice.isEmpty()
        && priority.isEmpty()
        && timeLimitMinutes.isEmpty()
        && comment.isEmpty()
        && qos.isEmpty()
        && partition.isEmpty()) {
      throw new IllegalArgumentException("a job update must change at least one field");
    }
  }

  public static JobUpdate release() {
    return held(false);
  }

  /** Holds a pending job: priority 0, seen by neither of Slurm's schedulers until released. */
  public static JobUpdate holding() {
    return held(true);
  }

  private static JobUpdate held(boolean hold) {
    return new JobUpdate(
        Optional.of(hold),
        OptionalInt.empty(),
        OptionalLong.empty(),
        OptionalInt.empty(),
        Optional.empty(),
        Optional.empty(),
        Optional.empty());
  }

  public static JobUpdate nice(int nice) {
    return new JobUpdate(
        Optional.empty(),
        OptionalInt.of(nice),
        OptionalLong.empty(),
        OptionalInt.empty(),
        Optional.empty(),
        Optional.empty(),
        Optional.empty());
  }

  public static JobUpdate priority(long priority) {
    return new JobUpdate(
        Optional.empty(),
        OptionalInt.empty(),
        OptionalLong.of(priority),
        OptionalInt.empty(),
        Optional.empty(),
        Optional.empty(),
        Optional.empty());
  }

  public static JobUpdate timeLimit(int minutes) {
    return new JobUpdate(
        Optional.empty(),
        OptionalInt.empty(),
        OptionalLong.empty(),
        OptionalInt.of(minutes),
        Optional.empty(),
        Optional.empty(),
        Optional.empty());
  }
}
