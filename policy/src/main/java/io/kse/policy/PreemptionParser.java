package io.kse.policy;

import com.fasterxml.jackson.databind.JsonNode;
import io.kse.policy.model.PreemptionSafety;
import io.kse.policy.model.Tier;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;

/**
 * The policy's preemption rules, read and checked: the {@code preemption} section (dry run,
 * budgets, minimum runtimes), the tiers' {@code mayPreempt} graph (known, lower, preemptible, no
 * cycle) and the fallbacks a tier needs when it may not preempt. Problems go to the one list of
 * {@link PolicyReader}, so they are listed with every other.
 */
final class PreemptionParser {
  private final PolicyReader r;

  PreemptionParser(PolicyReader reader) {
    this.r = reader;
  }

  /** The {@code preemption} section: dry run, budgets per tier, minimum runtimes. */
  PreemptionSafety safety(JsonNode s, List<Tier> tiers) {
    String p = "preemption";
    if (s.isMissingNode()) {
      return new PreemptionSafety(false, List.of(), Map.of());
    }
    r.keys(s, p, "dryRun", "budgets", "minRuntime");
    Set<String> names = PolicyReader.tierNames(tiers);
    List<PreemptionSafety.Budget> budgets = new ArrayList<>();
    JsonNode b = s.path("budgets");
    if (!b.isMissingNode() && !b.isArray()) {
      r.problem(p + ".budgets", "expected a list");
    }
    for (int i = 0; b.isArray() && i < b.size(); i++) {
      String bp = p + ".budgets[" + i + "]";
      JsonNode e = b.get(i);
      r.keys(e, bp, "tier", "maxGpus", "maxNodes", "window");
      String tier = r.text(e, bp, "tier").orElse("");
      r.checkTierRef(bp + ".tier", tier, names);
      OptionalInt gpus = r.integer(e, bp, "maxGpus");
      OptionalInt nodes = r.integer(e, bp, "maxNodes");
      if (gpus.isEmpty() && nodes.isEmpty()) {
        r.problem(bp, "set maxGpus, maxNodes or both");
      }
      gpus.ifPresent(v -> r.nonNegative(bp + ".maxGpus", v));
      nodes.ifPresent(v -> r.nonNegative(bp + ".maxNodes", v));
      Optional<Duration> window = r.duration(e, bp, "window");
      if (window.isEmpty()) {
        r.problem(bp + ".window", "required, e.g. 10m");
      }
      if (budgets.stream().anyMatch(x -> x.tier().equals(tier))) {
        r.problem(bp + ".tier", "tier \"" + tier + "\" already has a budget; one per tier");
      }
      budgets.add(
          new PreemptionSafety.Budget(
              tier,
              gpus.orElse(Integer.MAX_VALUE),
              nodes.orElse(Integer.MAX_VALUE),
              window.orElse(Duration.ofMinutes(10))));
    }
    Map<String, Duration> minRuntime = new LinkedHashMap<>();
    JsonNode mr = s.path("minRuntime");
    if (!mr.isMissingNode() && !mr.isObject()) {
      r.problem(p + ".minRuntime", "expected a mapping of tier: duration");
    }
    mr.fields()
        .forEachRemaining(
            f -> {
              String mp = p + ".minRuntime." + f.getKey();
              r.checkTierRef(mp, f.getKey(), names);
              tiers.stream()
                  .filter(t -> t.name().equals(f.getKey()) && !t.preemptible())
                  .findFirst()
                  .ifPresent(
                      t ->
                          r.problem(
                              mp,
                              "tier \""
                                  + t.name()
                                  + "\" is not preemptible, so a minimum runtime means nothing"));
              try {
                minRuntime.put(f.getKey(), Durations.parse(f.getValue().asText()));
              } catch (IllegalArgumentException e) {
                r.problem(mp, e.getMessage());
              }
            });
    return new PreemptionSafety(r.bool(s, p, "dryRun", false), budgets, minRuntime);
  }

  /** mayPreempt: known tiers, lower than the preemptor, preemptible; and no cycles. */
  void checkPreemptionGraph(List<Tier> tiers) {
    Set<String> names = PolicyReader.tierNames(tiers);
    Map<String, Integer> rank = new HashMap<>();
    for (int i = 0; i < tiers.size(); i++) {
      rank.putIfAbsent(tiers.get(i).name(), i);
    }
    for (int i = 0; i < tiers.size(); i++) {
      Tier t = tiers.get(i);
      for (int j = 0; j < t.mayPreempt().size(); j++) {
        String target = t.mayPreempt().get(j);
        String p = "tiers[" + i + "].mayPreempt[" + j + "]";
        if (!names.contains(target)) {
          r.problem(p, "unknown tier \"" + target + "\"" + r.hint(target, names));
        } else if (target.equals(t.name())) {
          r.problem(p, "tier \"" + t.name() + "\" may not preempt itself");
        } else if (rank.get(target) < i) {
          r.problem(
              p,
              "tier \""
                  + t.name()
                  + "\" may not preempt the higher tier \""
                  + target
                  + "\"; tiers are listed highest first");
        } else if (tiers.get(rank.get(target)).preemptible() == false) {
          r.problem(p, "tier \"" + target + "\" is not preemptible (set preemptible: true on it)");
        }
      }
    }
    findCycle(tiers)
        .ifPresent(c -> r.problem("tiers", "preemption cycle: " + String.join(" -> ", c)));
  }

  private static Optional<List<String>> findCycle(List<Tier> tiers) {
    Map<String, List<String>> edges = new HashMap<>();
    tiers.forEach(t -> edges.put(t.name(), t.mayPreempt()));
    Map<String, Integer> state = new HashMap<>(); // 1 = on the path, 2 = done
    for (Tier t : tiers) {
      List<String> path = new ArrayList<>();
      Optional<List<String>> c = dfs(t.name(), edges, state, path);
      if (c.isPresent()) {
        return c;
      }
    }
    return Optional.empty();
  }

  private static Optional<List<String>> dfs(
      String n, Map<String, List<String>> edges, Map<String, Integer> state, List<String> path) {
    Integer s = state.get(n);
    if (s != null && s == 2) {
      return Optional.empty();
    }
    if (s != null && s == 1) {
      List<String> cycle = new ArrayList<>(path.subList(path.indexOf(n), path.size()));
      cycle.add(n);
      return Optional.of(cycle);
    }
    state.put(n, 1);
    path.add(n);
    for (String next : edges.getOrDefault(n, List.of())) {
      if (edges.containsKey(next)) {
        Optional<List<String>> c = dfs(next, edges, state, path);
        if (c.isPresent()) {
          return c;
        }
      }
    }
    path.remove(path.size() - 1);
    state.put(n, 2);
    return Optional.empty();
  }

  /** A tier that preempts must have somewhere to go when it may not: dry run or budget. */
  void checkFallbacks(List<Tier> tiers, PreemptionSafety safety) {
    Set<String> budgeted = new HashSet<>();
    safety.budgets().forEach(b -> budgeted.add(b.tier()));
    for (int i = 0; i < tiers.size(); i++) {
      Tier t = tiers.get(i);
      boolean needs = !t.mayPreempt().isEmpty() && (safety.dryRun() || budgeted.contains(t.name()));
      if (needs && t.slurm().fallbackPartition().isEmpty() && t.slurm().fallbackQos().isEmpty()) {
        r.problem(
            "tiers[" + i + "].slurm",
            "needs fallbackPartition or fallbackQos (a non-preempting"
                + " place for its placeholders) because "
                + (safety.dryRun() ? "preemption.dryRun is on" : "it has a budget"));
      }
    }
  }
}
