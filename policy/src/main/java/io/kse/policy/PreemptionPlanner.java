package io.kse.policy;

import io.kse.policy.model.Policy;
import io.kse.policy.model.Tier;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/**
 * For explanations: which running jobs a tier's placeholder could preempt, and which are protected
 * and why. Slurm picks the actual victims; this shows the SRE what the policy allows.
 */
public final class PreemptionPlanner {
  /** A running job and the verdict on it. */
  public record Verdict(RunningJob job, String tier, boolean preemptible, String reason) {}

  private final Policy policy;

  public PreemptionPlanner(Policy policy) {
    this.policy = policy;
  }

  /** Verdicts for every job, preemptible ones first (lowest tier, then youngest). */
  public List<Verdict> plan(
      String preemptorTier, List<RunningJob> jobs, PreemptionLedger ledger, Instant now) {
    Tier preemptor =
        policy
            .tier(preemptorTier)
            .orElseThrow(() -> new IllegalArgumentException("no tier " + preemptorTier));
    long budgetGpus = Long.MAX_VALUE;
    long budgetNodes = Long.MAX_VALUE;
    for (var b : policy.preemption().budgets()) {
      if (b.tier().equals(preemptorTier)) {
        PreemptionLedger.Usage used = ledger.usage(preemptorTier, b.window(), now);
        budgetGpus = b.maxGpus() - used.gpus();
        budgetNodes = b.maxNodes() - used.nodes();
      }
    }
    List<Verdict> out = new ArrayList<>();
    for (RunningJob j : jobs) {
      Optional<Tier> t = policy.tierOfSlurmJob(j.partition(), j.qos());
      String tier = t.map(Tier::name).orElse("(none)");
      if (t.isEmpty()) {
        out.add(
            new Verdict(
                j,
                tier,
                false,
                "belongs to no tier (partition " + j.partition() + ", qos " + j.qos() + ")"));
      } else if (!preemptor.mayPreempt().contains(tier)) {
        out.add(
            new Verdict(j, tier, false, "tier " + preemptorTier + " may not preempt tier " + tier));
      } else if (policy.preemption().dryRun()) {
        out.add(new Verdict(j, tier, false, "dry run: would be preemptible"));
      } else if (tooYoung(tier, j, now).isPresent()) {
        out.add(new Verdict(j, tier, false, tooYoung(tier, j, now).get()));
      } else if (j.gpus() > budgetGpus || j.nodes() > budgetNodes) {
        out.add(
            new Verdict(
                j,
                tier,
                false,
                "protected by the budget of tier "
                    + preemptorTier
                    + " ("
                    + Math.max(0, budgetGpus)
                    + " GPUs, "
                    + Math.max(0, budgetNodes)
                    + " nodes left)"));
      } else {
        out.add(new Verdict(j, tier, true, "preemptible"));
      }
    }
    out.sort(
        Comparator.comparing((Verdict v) -> !v.preemptible())
            .thenComparing(v -> -rankOr(v.tier()))
            .thenComparing(v -> v.job().startTime(), Comparator.reverseOrder())
            .thenComparing(v -> v.job().id()));
    return out;
  }

  private int rankOr(String tier) {
    return policy.tier(tier).map(t -> policy.rank(t.name())).orElse(-1);
  }

  private Optional<String> tooYoung(String tier, RunningJob j, Instant now) {
    Duration min = policy.preemption().minRuntime().get(tier);
    if (min == null) {
      return Optional.empty();
    }
    Duration ran = Duration.between(j.startTime(), now);
    return ran.compareTo(min) < 0
        ? Optional.of(
            "protected by minimum runtime "
                + Durations.slurm(min)
                + " of tier "
                + tier
                + " (ran "
                + Durations.slurm(ran)
                + ")")
        : Optional.empty();
  }
}
