package io.kse.extender.lifecycle;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * When each Slurm node went down, as Slurm stamped it where it says (else when a pass first saw it
 * down), kept {@link #KEPT}: enough to tell a job that lost its run to a node failure from one a
 * placeholder preempted. Not thread-safe (the tracker's lock).
 */
final class NodeDowntime {
  /** Longer than a victim and its taker are kept waiting for each other. */
  static final Duration KEPT = PreemptionTracker.WINDOW.multipliedBy(5);

  private final Map<String, List<Instant>> wentDown = new HashMap<>();
  private final Set<String> down = new HashSet<>();

  /** The node was seen down (since {@code at}) or not; only a change to down is remembered. */
  void observe(String node, boolean isDown, Instant at) {
    if (!isDown) {
      down.remove(node);
    } else if (down.add(node)) {
      wentDown.computeIfAbsent(node, n -> new ArrayList<>()).add(at);
    }
  }

  /** Whether the node went down at some moment of [from, to]. */
  boolean wentDown(String node, Instant from, Instant to) {
    return wentDown.getOrDefault(node, List.of()).stream()
        .anyMatch(t -> !t.isBefore(from) && !t.isAfter(to));
  }

  void forgetBefore(Instant cutoff) {
    wentDown.values().forEach(l -> l.removeIf(t -> t.isBefore(cutoff)));
    wentDown.values().removeIf(List::isEmpty);
  }
}
