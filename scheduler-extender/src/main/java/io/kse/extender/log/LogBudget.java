package io.kse.extender.log;

import java.time.Clock;
import java.util.concurrent.atomic.AtomicLong;

/**
 * At most {@code perWindow} log lines of one kind per window; the lines dropped are counted and
 * reported with the next line let through, so a flood of refusals costs a few lines a second.
 */
public final class LogBudget {
  private final Clock clock;
  private final long windowMillis;
  private final int perWindow;
  private long windowStart;
  private int used;
  private final AtomicLong dropped = new AtomicLong();

  public LogBudget(Clock clock, long windowMillis, int perWindow) {
    this.clock = clock;
    this.windowMillis = windowMillis;
    this.perWindow = perWindow;
  }

  /**
   * -1 when this line must be dropped; otherwise how many lines were dropped since the last one let
   * through (to be logged with it).
   */
  public synchronized long admit() {
    long now = clock.millis();
    if (now - windowStart >= windowMillis) {
      windowStart = now;
      used = 0;
    }
    if (used >= perWindow) {
      dropped.incrementAndGet();
      return -1;
    }
    used++;
    return dropped.getAndSet(0);
  }
}
