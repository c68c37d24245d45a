package io.kse.policy.model;

import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * Limits on how much inference may take from training.
 *
 * @param dryRun decide and explain, but submit every placeholder with its tier's non-preempting
 *     fallback
 * @param budgets per preempting tier, how much it may preempt in a sliding window
 * @param minRuntime per preemptible tier, how long its jobs run before they may be preempted
 */
public record PreemptionSafety(
    boolean dryRun, List<Budget> budgets, Map<String, Duration> minRuntime) {

  public PreemptionSafety {
    budgets = List.copyOf(budgets);
    minRuntime = Map.copyOf(minRuntime);
  }

  /**
   * At most {@code maxGpus} GPUs and {@code maxNodes} nodes preempted by {@code tier} per window.
   */
  public record Budget(String tier, long maxGpus, long maxNodes, Duration window) {}
}
