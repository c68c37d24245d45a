package io.kse.policy.replay;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * What one replay of a trace did under one policy, summed up the way an SRE compares policies:
 * inference time to allocation per tier, pods that waited too long or never got GPUs, training
 * preempted (jobs, by partition, and GPU-hours of work lost), budget refusals. Pure arithmetic on
 * the replay's outcomes, so it is tested on hand-made ones.
 */
public record ReplayReport(
    String policy,
    Map<String, TierWaits> tiers,
    Map<String, Integer> preemptionsByPartition,
    double trainingGpuHoursLost,
    Map<String, Integer> budgetRefusalsByTier,
    Duration threshold,
    int refusedByPolicy) {

  /** One inference arrival's fate: its tier and how long it waited, empty if it never got GPUs. */
  public record Arrival(String id, String tier, Optional<Duration> waited) {}

  /** A training job that lost its run: the work since its start is lost (it reruns from 0). */
  public record Preemption(String victim, String partition, long gpus, Duration ranFor) {}

  /**
   * Time to allocation of one tier: percentiles by nearest rank over the arrivals that got GPUs.
   */
  public record TierWaits(
      int arrivals, int allocated, Duration p50, Duration p95, Duration p99, int overThreshold) {
    public int neverAllocated() {
      return arrivals - allocated;
    }
  }

  public static ReplayReport of(
      String policy,
      List<Arrival> arrivals,
      List<Preemption> preemptions,
      Map<String, Integer> budgetRefusalsByTier,
      Duration threshold) {
    return of(policy, arrivals, preemptions, budgetRefusalsByTier, threshold, 0);
  }

  /**
   * As above, with the arrivals refused outright ({@code refusedByPolicy}: the policy refused them
   * — a group larger than its tier's maxNodes, an override not allowed — or Slurm refused their
   * placeholder), which never got a job.
   */
  public static ReplayReport of(
      String policy,
      List<Arrival> arrivals,
      List<Preemption> preemptions,
      Map<String, Integer> budgetRefusalsByTier,
      Duration threshold,
      int refusedByPolicy) {
    Map<String, List<Arrival>> byTier =
        arrivals.stream()
            .collect(Collectors.groupingBy(Arrival::tier, TreeMap::new, Collectors.toList()));
    Map<String, TierWaits> tiers = new TreeMap<>();
    byTier.forEach(
        (tier, list) -> {
          List<Duration> waits = list.stream().flatMap(a -> a.waited().stream()).sorted().toList();
          int over =
              (int)
                  list.stream()
                      .filter(a -> a.waited().map(w -> w.compareTo(threshold) > 0).orElse(true))
                      .count();
          tiers.put(
              tier,
              new TierWaits(
                  list.size(),
                  waits.size(),
                  nearestRank(waits, 50),
                  nearestRank(waits, 95),
                  nearestRank(waits, 99),
                  over));
        });
    Map<String, Integer> byPartition = new TreeMap<>();
    double lost = 0;
    for (Preemption p : preemptions) {
      byPartition.merge(p.partition(), 1, Integer::sum);
      lost += p.gpus() * p.ranFor().toMillis() / 3_600_000.0;
    }
    return new ReplayReport(
        policy,
        tiers,
        byPartition,
        lost,
        new TreeMap<>(budgetRefusalsByTier),
        threshold,
        refusedByPolicy);
  }

  /** The smallest wait that at least {@code pct} % of the waits do not exceed; zero for none. */
  static Duration nearestRank(List<Duration> sorted, int pct) {
    if (sorted.isEmpty()) {
      return Duration.ZERO;
    }
    int rank = (int) Math.ceil(pct / 100.0 * sorted.size());
    return sorted.get(Math.max(0, rank - 1));
  }

  public int preemptions() {
    return preemptionsByPartition.values().stream().mapToInt(Integer::intValue).sum();
  }

  /** The reports side by side, one column per policy, as the terminal shows them. */
  public static String table(List<ReplayReport> reports) {
    List<String> tierNames =
        reports.stream().flatMap(r -> r.tiers().keySet().stream()).distinct().sorted().toList();
    List<String[]> rows = new ArrayList<>();
    rows.add(header(reports));
    for (String tier : tierNames) {
      rows.add(row(reports, "inference " + tier + " p50/p95/p99", r -> waits(r.tiers().get(tier))));
      rows.add(
          row(
              reports,
              "  waited > " + seconds(reports.get(0).threshold()) + " / never",
              r ->
                  Optional.ofNullable(r.tiers().get(tier))
                      .map(t -> t.overThreshold() + " / " + t.neverAllocated())
                      .orElse("-")));
    }
    rows.add(row(reports, "training jobs preempted", r -> Integer.toString(r.preemptions())));
    List<String> partitions =
        reports.stream()
            .flatMap(r -> r.preemptionsByPartition().keySet().stream())
            .distinct()
            .sorted()
            .toList();
    for (String p : partitions) {
      rows.add(
          row(
              reports,
              "  in partition " + p,
              r -> Integer.toString(r.preemptionsByPartition().getOrDefault(p, 0))));
    }
    rows.add(
        row(
            reports,
            "training GPU-hours lost",
            r -> String.format(Locale.ROOT, "%.1f", r.trainingGpuHoursLost())));
    rows.add(row(reports, "refused outright", r -> Integer.toString(r.refusedByPolicy())));
    rows.add(
        row(
            reports,
            "budget refusals",
            r ->
                Integer.toString(
                    r.budgetRefusalsByTier().values().stream().mapToInt(i -> i).sum())));
    return render(rows);
  }

  private static String[] header(List<ReplayReport> reports) {
    String[] h = new String[reports.size() + 1];
    h[0] = "";
    for (int i = 0; i < reports.size(); i++) {
      h[i + 1] = reports.get(i).policy();
    }
    return h;
  }

  private static String[] row(
      List<ReplayReport> reports,
      String label,
      java.util.function.Function<ReplayReport, String> f) {
    String[] r = new String[reports.size() + 1];
    r[0] = label;
    for (int i = 0; i < reports.size(); i++) {
      r[i + 1] = f.apply(reports.get(i));
    }
    return r;
  }

  private static String render(List<String[]> rows) {
    int cols = rows.get(0).length;
    int[] width = new int[cols];
    for (String[] r : rows) {
      for (int c = 0; c < cols; c++) {
        width[c] = Math.max(width[c], r[c].length());
      }
    }
    StringBuilder out = new StringBuilder();
    for (String[] r : rows) {
      for (int c = 0; c < cols; c++) {
        String cell = c == 0 ? pad(r[c], width[c]) : padLeft(r[c], width[c]);
        out.append(cell).append(c == cols - 1 ? "\n" : "  ");
      }
    }
    return out.toString();
  }

  private static String waits(TierWaits t) {
    return t == null ? "-" : seconds(t.p50()) + " / " + seconds(t.p95()) + " / " + seconds(t.p99());
  }

  public static String seconds(Duration d) {
    return String.format(Locale.ROOT, "%.1fs", d.toMillis() / 1000.0);
  }

  private static String pad(String s, int w) {
    return s + " ".repeat(w - s.length());
  }

  private static String padLeft(String s, int w) {
    return " ".repeat(w - s.length()) + s;
  }

  /**
   * The differences between a baseline and a candidate an SRE would want said in words, each only
   * when it is larger than the baseline differs from itself replayed again ({@code noise}): more or
   * fewer training jobs preempted, GPU-hours lost, a tier's p95 wait, pods never allocated.
   */
  public static List<String> callouts(
      ReplayReport baseline, ReplayReport candidate, ReplayReport baselineAgain) {
    List<String> out = new ArrayList<>();
    int noisePre = Math.abs(baseline.preemptions() - baselineAgain.preemptions());
    int dPre = candidate.preemptions() - baseline.preemptions();
    if (Math.abs(dPre) > noisePre && dPre != 0) {
      out.add(
          String.format(
              Locale.ROOT,
              "%s preempts %d %s training jobs than %s (%d vs %d; replaying %s twice differed by %d)",
              candidate.policy(),
              Math.abs(dPre),
              dPre < 0 ? "fewer" : "more",
              baseline.policy(),
              candidate.preemptions(),
              baseline.preemptions(),
              baseline.policy(),
              noisePre));
    }
    double noiseLost =
        Math.abs(baseline.trainingGpuHoursLost() - baselineAgain.trainingGpuHoursLost());
    double dLost = candidate.trainingGpuHoursLost() - baseline.trainingGpuHoursLost();
    if (Math.abs(dLost) > noiseLost && Math.abs(dLost) >= 0.05) {
      out.add(
          String.format(
              Locale.ROOT,
              "training loses %.1f GPU-hours %s under %s (%.1f vs %.1f)",
              Math.abs(dLost),
              dLost < 0 ? "less" : "more",
              candidate.policy(),
              candidate.trainingGpuHoursLost(),
              baseline.trainingGpuHoursLost()));
    }
    int refused = candidate.refusedByPolicy() - baseline.refusedByPolicy();
    if (refused != 0
        && Math.abs(refused)
            > Math.abs(baseline.refusedByPolicy() - baselineAgain.refusedByPolicy())) {
      out.add(
          String.format(
              Locale.ROOT,
              "%s refuses %d %s arrivals outright than %s (%d vs %d): see the replay's log for why",
              candidate.policy(),
              Math.abs(refused),
              refused > 0 ? "more" : "fewer",
              baseline.policy(),
              candidate.refusedByPolicy(),
              baseline.refusedByPolicy()));
    }
    for (Map.Entry<String, TierWaits> e : candidate.tiers().entrySet()) {
      TierWaits b = baseline.tiers().get(e.getKey());
      TierWaits again = baselineAgain.tiers().get(e.getKey());
      if (b == null || again == null) {
        continue;
      }
      long noise = Math.abs(b.p95().toMillis() - again.p95().toMillis());
      long d = e.getValue().p95().toMillis() - b.p95().toMillis();
      if (Math.abs(d) > noise && Math.abs(d) > b.p95().toMillis() / 5) {
        out.add(
            String.format(
                Locale.ROOT,
                "tier %s waits %s at p95 under %s against %s (%s; of the arrivals that got"
                    + " GPUs: %d and %d)",
                e.getKey(),
                seconds(e.getValue().p95()),
                candidate.policy(),
                seconds(b.p95()),
                d > 0 ? "longer" : "shorter",
                e.getValue().allocated(),
                b.allocated()));
      }
      int never = e.getValue().neverAllocated() - b.neverAllocated();
      int neverNoise = Math.abs(b.neverAllocated() - again.neverAllocated());
      if (never > neverNoise && never > 0) {
        out.add(
            String.format(
                Locale.ROOT,
                "%d more %s pods never got GPUs under %s (%d vs %d)",
                never,
                e.getKey(),
                candidate.policy(),
                e.getValue().neverAllocated(),
                b.neverAllocated()));
      }
    }
    return out;
  }
}
