package io.kse.slurm.cache;

import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/** The cache's one thread: a pass every interval, and extra passes hints ask for, folded. */
final class Poller implements AutoCloseable {
  private final ScheduledExecutorService thread =
      Executors.newSingleThreadScheduledExecutor(
          r -> {
            Thread t = new Thread(r, "kse-slurm-poller");
            t.setDaemon(true);
            return t;
          });
  private final AtomicBoolean extraQueued = new AtomicBoolean();
  private final Runnable pass;
  private volatile long lastEndNanos;

  Poller(Runnable pass) {
    this.pass = pass;
  }

  void start(Duration every) {
    thread.scheduleWithFixedDelay(this::run, 0, every.toMillis(), TimeUnit.MILLISECONDS);
  }

  /**
   * One more pass, soon: calls while one is queued fold into it, and it runs at least {@code
   * minGap} after the previous pass ended, so a flood of hints adds at most one pass per gap.
   */
  void soon(Duration minGap) {
    if (!extraQueued.compareAndSet(false, true)) {
      return;
    }
    long wait = Math.max(0, lastEndNanos + minGap.toNanos() - System.nanoTime());
    try {
      thread.schedule(
          () -> {
            extraQueued.set(false);
            run();
          },
          wait,
          TimeUnit.NANOSECONDS);
    } catch (RejectedExecutionException e) {
      extraQueued.set(false); // closed
    }
  }

  /** A pass ended (on this thread or a caller's): the next extra one keeps its gap from now. */
  void passEnded() {
    lastEndNanos = System.nanoTime();
  }

  private void run() {
    pass.run();
  }

  @Override
  public void close() {
    thread.shutdownNow();
  }
}
