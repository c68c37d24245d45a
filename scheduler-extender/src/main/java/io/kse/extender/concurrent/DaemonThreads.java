package io.kse.extender.concurrent;

import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Threads named after their job (so thread dumps and logs say who is busy) that never keep the JVM
 * alive on their own: shutdown is the service's LIFO stop list, not the last thread ending.
 */
public final class DaemonThreads {
  private DaemonThreads() {}

  /** {@code name} for the first thread, {@code name-2}, {@code name-3}… for more. */
  public static ThreadFactory named(String name) {
    AtomicInteger n = new AtomicInteger();
    return r -> {
      int i = n.incrementAndGet();
      Thread t = new Thread(r, i == 1 ? name : name + "-" + i);
      t.setDaemon(true);
      return t;
    };
  }
}
