package io.kse.policy;

import io.kse.policy.model.PreemptionSafety;
import io.kse.policy.model.SlurmSettings;
import io.kse.policy.model.Tier;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * Whether a tier may preempt right now: not in a dry run, and not past its budget of GPUs and nodes
 * taken from others in the budget's window (as the ledger counts them). Pure: the same ledger and
 * time give the same answer.
 */
final class PreemptionBudgets {
  private final PreemptionSafety safety;

  PreemptionBudgets(PreemptionSafety safety) {
    this.safety = safety;
  }

  /** What the record says of preemption: the tier may preempt, or why it falls back. */
  static Contribution said(Tier tier, Optional<String> stop) {
    SlurmSettings s = tier.slurm();
    return stop.map(
            why ->
                new Contribution(
                    "preemption",
                    why
                        + ": non-preempting fallback"
                        + s.fallbackPartition().map(p -> " partition=" + p).orElse("")
                        + s.fallbackQos().map(q -> " qos=" + q).orElse("")))
        .orElseGet(
            () -> new Contribution("tier " + tier.name(), "may preempt " + tier.mayPreempt()));
  }

  /**
   * Each budgeted tier's use of its budget in its window (see {@link PlacementPolicy#budgetUse}).
   */
  Map<String, Double> use(PreemptionLedger ledger, Instant now) {
    Map<String, Double> out = new TreeMap<>();
    for (PreemptionSafety.Budget b : safety.budgets()) {
      PreemptionLedger.Usage used = ledger.usage(b.tier(), b.window(), now);
      out.put(
          b.tier(), Math.max(share(used.gpus(), b.maxGpus()), share(used.nodes(), b.maxNodes())));
    }
    return out;
  }

  /** The longest window of any budget: how far back the ledger must remember. */
  Optional<Duration> longestWindow() {
    return safety.budgets().stream().map(PreemptionSafety.Budget::window).max(Duration::compareTo);
  }

  private static double share(long used, long max) {
    if (max == Integer.MAX_VALUE) {
      return 0; // no limit of this kind
    }
    return max <= 0 ? 1 : (double) used / max;
  }

  /** Why this tier may not preempt now (dry run, budget), or empty when it may. */
  Optional<String> stop(Tier tier, PodFacts pod, int nodes, PreemptionLedger ledger, Instant now) {
    if (safety.dryRun()) {
      return Optional.of("dry run (preemption.dryRun)");
    }
    for (PreemptionSafety.Budget b : safety.budgets()) {
      if (!b.tier().equals(tier.name())) {
        continue;
      }
      PreemptionLedger.Usage used = ledger.usage(tier.name(), b.window(), now);
      // a share of a GPU or a MIG slice may preempt a whole GPU's worth (a job holding the GPU)
      boolean part = pod.draGpuShares() > 0 || !pod.draMigDevices().isEmpty();
      long gpus = (pod.gpus() + (part ? 1 : 0)) * nodes;
      if (used.gpus() + gpus > b.maxGpus() || used.nodes() + nodes > b.maxNodes()) {
        return Optional.of(
            "budget of tier "
                + tier.name()
                + " used up ("
                + used.gpus()
                + "/"
                + (b.maxGpus() == Integer.MAX_VALUE ? "-" : b.maxGpus())
                + " GPUs, "
                + used.nodes()
                + "/"
                + (b.maxNodes() == Integer.MAX_VALUE ? "-" : b.maxNodes())
                + " nodes in "
                + Durations.slurm(b.window())
                + ")");
      }
    }
    return Optional.empty();
  }
}
