package io.kse.policy;

import static org.assertj.core.api.Assertions.assertThat;

import io.kse.policy.model.Policy;
import io.kse.policy.model.Tier;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Invariants over randomly generated policies and pods (seeded, so a failure names its seed): a
 * policy that validates never lets a tier preempt itself or a higher tier; every pod gets exactly
 * one tier, the first that matches or the default; and decisions are deterministic.
 */
class PolicyPropertiesTest {
  private static final String[] NAMES = {"crit", "serve", "batch", "eval", "train", "scavenger"};
  private static final String[] NAMESPACES = {"prod", "research", "batch", "default"};
  private static final String[] CLASSES = {"high", "low", "none"};

  @ParameterizedTest(name = "seed {0}")
  @ValueSource(longs = {1, 7, 42, 1234, 99991})
  void validPoliciesNeverPreemptUpwardsAndPodsGetExactlyOneTier(long seed) {
    Random r = new Random(seed);
    int valid = 0;
    int invalid = 0;
    for (int i = 0; i < 300; i++) {
      String yaml = randomPolicy(r);
      Policy p;
      try {
        p = PolicyParser.parse(yaml, "seed-" + seed + "-" + i);
      } catch (PolicyValidationException e) {
        invalid++;
        assertThat(e.problems()).isNotEmpty().allSatisfy(pr -> assertThat(pr).contains(": "));
        continue;
      }
      valid++;
      for (Tier t : p.tiers()) {
        for (String victim : t.mayPreempt()) {
          assertThat(victim)
              .as("seed %d policy %d: %s preempts itself\n%s", seed, i, t.name(), yaml)
              .isNotEqualTo(t.name());
          assertThat(p.rank(victim))
              .as("seed %d policy %d: %s preempts higher %s\n%s", seed, i, t.name(), victim, yaml)
              .isGreaterThan(p.rank(t.name()));
          assertThat(p.tier(victim).orElseThrow().preemptible()).isTrue();
        }
      }
      PlacementPolicy placement = new PlacementPolicy(p);
      for (int k = 0; k < 20; k++) {
        PodFacts pod = randomPod(r);
        Instant now = Instant.ofEpochSecond(1_800_000_000L + r.nextInt(10_000));
        Decision a = placement.decide(pod, new PreemptionLedger(), now);
        Decision b = placement.decide(pod, new PreemptionLedger(), now);
        assertThat(a).as("deterministic").isEqualTo(b);
        assertThat(p.tier(a.tier())).as("a tier of the policy").isPresent();
        assertThat(a.tier()).isEqualTo(expectedTier(p, pod));
      }
    }
    // the generator must exercise both sides, or the invariants prove nothing
    assertThat(valid).as("valid policies generated").isGreaterThan(50);
    assertThat(invalid).as("invalid policies generated").isGreaterThan(50);
  }

  /** An independent reading of "first match wins, else the default tier". */
  private static String expectedTier(Policy p, PodFacts pod) {
    for (Tier t : p.tiers()) {
      if (t.match().isEmpty()) {
        continue;
      }
      var m = t.match().get();
      boolean ok =
          (m.priorityClassNames().isEmpty()
                  || pod.priorityClassName().map(m.priorityClassNames()::contains).orElse(false))
              && (m.namespaces().isEmpty() || m.namespaces().contains(pod.namespace()))
              && (m.priorityMin().isEmpty()
                  || pod.priority().isPresent()
                      && pod.priority().getAsInt() >= m.priorityMin().getAsInt())
              && (m.priorityMax().isEmpty()
                  || pod.priority().isPresent()
                      && pod.priority().getAsInt() <= m.priorityMax().getAsInt())
              && m.labels().entrySet().stream()
                  .allMatch(e -> e.getValue().equals(pod.labels().get(e.getKey())));
      if (ok) {
        return t.name();
      }
    }
    return p.defaultTier();
  }

  private static String randomPolicy(Random r) {
    int n = 1 + r.nextInt(NAMES.length);
    List<String> names = new ArrayList<>(List.of(NAMES).subList(0, n));
    java.util.Collections.shuffle(names, r);
    StringBuilder y = new StringBuilder("apiVersion: kse.io/v1alpha1\nkind: PlacementPolicy\n");
    y.append("cluster: {preemptMode: partition, nvlinkDomainFeatures: [nvl-0, nvl-1]}\n");
    y.append("defaultTier: ")
        .append(r.nextInt(10) == 0 ? "missing" : names.get(r.nextInt(n)))
        .append('\n');
    y.append("tiers:\n");
    for (int i = 0; i < n; i++) {
      y.append("  - name: ").append(names.get(i)).append('\n');
      if (r.nextBoolean()) {
        y.append("    match:\n");
        switch (r.nextInt(3)) {
          case 0 ->
              y.append("      priorityClassNames: [")
                  .append(CLASSES[r.nextInt(CLASSES.length)])
                  .append("]\n");
          case 1 -> {
            int lo = r.nextInt(2000);
            y.append("      priorityRange: {min: ")
                .append(lo)
                .append(", max: ")
                .append(lo + r.nextInt(3000) - 200)
                .append("}\n");
          }
          default ->
              y.append("      namespaces: [")
                  .append(NAMESPACES[r.nextInt(NAMESPACES.length)])
                  .append("]\n");
        }
        if (r.nextInt(4) == 0) {
          y.append("      labels: {app: ").append(r.nextBoolean() ? "llm" : "web").append("}\n");
        }
      }
      y.append("    slurm: {partition: p").append(i).append("}\n");
      if (r.nextInt(10) < 8) {
        y.append("    preemptible: true\n");
      }
      List<String> victims = new ArrayList<>();
      int edges = r.nextInt(3);
      for (int e = 0; e < edges; e++) {
        // mostly lower tiers, sometimes itself, a higher one, or a typo
        int roll = r.nextInt(20);
        if (roll < 17) {
          if (i + 1 < n) {
            victims.add(names.get(i + 1 + r.nextInt(n - i - 1)));
          }
        } else if (roll == 17) {
          victims.add(names.get(i));
        } else if (roll == 18) {
          victims.add(names.get(r.nextInt(n)));
        } else {
          victims.add("trainng");
        }
      }
      if (!victims.isEmpty()) {
        y.append("    mayPreempt: ").append(victims).append('\n');
      }
      if (r.nextInt(8) == 0) {
        y.append("    topology: nvlink-domain\n");
      }
    }
    return y.toString();
  }

  private static PodFacts randomPod(Random r) {
    Map<String, String> labels = new HashMap<>();
    if (r.nextBoolean()) {
      labels.put("app", r.nextBoolean() ? "llm" : "web");
    }
    String cls = CLASSES[r.nextInt(CLASSES.length)];
    return new PodFacts(
        NAMESPACES[r.nextInt(NAMESPACES.length)],
        "pod-" + r.nextInt(1000),
        "uid-" + r.nextLong(),
        labels,
        Map.of(),
        cls.equals("none") ? Optional.empty() : Optional.of(cls),
        r.nextBoolean() ? OptionalInt.of(r.nextInt(5000)) : OptionalInt.empty(),
        Optional.empty(),
        r.nextInt(64_000),
        (long) r.nextInt(1 << 20) << 10,
        r.nextBoolean() ? Map.of(PodFacts.GPU, (long) r.nextInt(9)) : Map.of(),
        OptionalLong.empty());
  }
}
