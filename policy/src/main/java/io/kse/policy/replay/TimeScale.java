package io.kse.policy.replay;

import java.time.Duration;

/**
 * Compressed time for a replay: {@code speed} trace seconds pass in one wall second. Arrivals,
 * lifetimes and runtimes shrink by the speed, and so must the Slurm settings that count time —
 * preemption grace, minimum runtimes (PreemptExemptTime), time limits — or a replay at 60× would
 * let a 15-minute exemption cover a whole day of training. (Budget windows need no scaling: the
 * replay's preemption ledger runs on the trace's clock.) What cannot shrink below Slurm's own
 * resolution (one second: grace and exempt times are whole seconds) is floored and reported, so a
 * report can say which decisions the compression blurred.
 */
public record TimeScale(double speed) {
  public TimeScale {
    if (!(speed >= 1) || Double.isInfinite(speed)) {
      throw new IllegalArgumentException("speed must be a finite number ≥ 1, got " + speed);
    }
  }

  /** A duration of the trace's clock on the wall's clock. */
  public Duration wall(Duration trace) {
    return Duration.ofNanos(Math.round(trace.toNanos() / speed));
  }

  /** A wall duration on the trace's clock (for reporting what was measured during a replay). */
  public Duration trace(Duration wall) {
    return Duration.ofNanos(Math.round(wall.toNanos() * speed));
  }

  /** A Slurm time setting at this speed, in Slurm's whole seconds. */
  public record SlurmSeconds(long seconds, boolean floored) {}

  /**
   * A time setting for the replay's Slurm: scaled, rounded to whole seconds, and at least one
   * second unless the setting is 0 (off), with {@code floored} saying the scaled value was smaller.
   */
  public SlurmSeconds slurm(Duration setting) {
    if (setting.isZero()) {
      return new SlurmSeconds(0, false);
    }
    double scaled = setting.toMillis() / 1000.0 / speed;
    return scaled < 1 ? new SlurmSeconds(1, true) : new SlurmSeconds(Math.round(scaled), false);
  }
}
