package io.kse.extender.concurrent;

import io.vertx.core.Future;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * Bounded waits for start and stop: none blocks longer than it is given, none swallows an
 * interrupt.
 */
public final class Waits {
  private Waits() {}

  /** Stops taking work and waits up to {@code limit} for what was taken. */
  public static void drain(ExecutorService pool, Duration limit) {
    pool.shutdown();
    try {
      pool.awaitTermination(limit.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * Returns once {@code done} holds, checking every 100 ms; throws when it did not within {@code
   * limit}, saying what was awaited and how things stand ({@code what}).
   */
  public static void until(BooleanSupplier done, Duration limit, Supplier<String> what) {
    long deadline = System.nanoTime() + limit.toNanos();
    while (!done.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(
            "not " + what.get() + " within " + limit.toSeconds() + " s");
      }
      sleep(100);
    }
  }

  public static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** The future's result within {@code limit}; its failure (or the time running out) thrown. */
  public static <T> T await(Future<T> f, Duration limit) {
    try {
      return f.toCompletionStage()
          .toCompletableFuture()
          .get(limit.toMillis(), TimeUnit.MILLISECONDS);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }
}
