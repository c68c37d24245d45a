package io.kse.policy;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.Map;

/**
 * How much each tier preempted recently, for preemption budgets. In memory, no clock of its own:
 * callers pass the time. Entries older than the longest window asked about are dropped.
 */
public final class PreemptionLedger {
  /** Totals within a window. */
  public record Usage(long gpus, long nodes) {}

  private record Entry(Instant at, long gpus, long nodes) {}

  private final Map<String, Deque<Entry>> byTier = new HashMap<>();

  /** Records that a placeholder of {@code tier} preempted jobs holding these resources. */
  public synchronized void record(String tier, long gpus, long nodes, Instant at) {
    byTier.computeIfAbsent(tier, t -> new ArrayDeque<>()).addLast(new Entry(at, gpus, nodes));
  }

  public synchronized Usage usage(String tier, Duration window, Instant now) {
    Deque<Entry> q = byTier.get(tier);
    if (q == null) {
      return new Usage(0, 0);
    }
    Instant from = now.minus(window);
    while (!q.isEmpty() && q.peekFirst().at().isBefore(from)) {
      q.pollFirst();
    }
    long g = 0;
    long n = 0;
    for (Entry e : q) {
      g += e.gpus();
      n += e.nodes();
    }
    return new Usage(g, n);
  }
}
