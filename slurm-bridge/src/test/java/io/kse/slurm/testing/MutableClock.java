package io.kse.slurm.testing;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

/** A clock the test moves: time-dependent logic tested without sleeping. */
public final class MutableClock extends Clock {
  private volatile Instant now;

  public MutableClock(Instant start) {
    this.now = start;
  }

  public MutableClock() {
    this(Instant.parse("2026-11-22T06:00:00Z"));
  }

  public void advance(Duration d) {
    now = now.plus(d);
  }

  public void set(Instant at) {
    now = at;
  }

  @Override
  public ZoneOffset getZone() {
    return ZoneOffset.UTC;
  }

  @Override
  public Clock withZone(ZoneId zone) {
    return this;
  }

  @Override
  public Instant instant() {
    return now;
  }
}
