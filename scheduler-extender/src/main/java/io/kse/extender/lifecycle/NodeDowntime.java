package io.kse.extender.lifecycle;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * When each Slurm node was seen down, as intervals of our clock (from the pass that saw it down to
 * the pass that saw it up again), kept {@link #KEPT}: enough to tell a job that lost its run to a
 * node failure from one a placeholder preempted. Not thread-safe (the tracker's lock).
 */
final class NodeDowntime {
  /** Longer than a victim and its taker are kept waiting for each other. */
  static final Duration KEPT = PreemptionTracker.WINDOW.multipliedBy(5);

  private record Down(Instant from, Instant to) {}

  private final Map<String, List<Down>> byNode = new HashMap<>();

  /** The node was seen down (or up) at {@code at}. Repeats of either are harmless. */
  void observe(String node, boolean down, Instant at) {
    List<Down> list = byNode.computeIfAbsent(node, n -> new ArrayList<>());
    Down last = list.isEmpty() ? null : list.get(list.size() - 1);
    boolean open = last != null && last.to() == null;
    if (down && !open) {
      list.add(new Down(at, null));
    } else if (!down && open) {
      list.set(list.size() - 1, new Down(last.from(), at));
    } else if (list.isEmpty()) {
      byNode.remove(node);
    }
  }

  /** Whether the node was seen down at some moment of [from, to]. */
  boolean wasDown(String node, Instant from, Instant to) {
    for (Down d : byNode.getOrDefault(node, List.of())) {
      if (!d.from().isAfter(to) && (d.to() == null || !d.to().isBefore(from))) {
        return true;
      }
    }
    return false;
  }

  void forgetBefore(Instant cutoff) {
    byNode.values().forEach(l -> l.removeIf(d -> d.to() != null && d.to().isBefore(cutoff)));
    byNode.values().removeIf(List::isEmpty);
  }
}
