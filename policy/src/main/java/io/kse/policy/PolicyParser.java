package io.kse.policy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.kse.policy.model.ClusterSpec;
import io.kse.policy.model.Overrides;
import io.kse.policy.model.Policy;
import io.kse.policy.model.PreemptionSafety;
import io.kse.policy.model.SlurmSettings;
import io.kse.policy.model.Tier;
import io.kse.policy.model.TierMatch;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.Set;
import java.util.function.Function;
import java.util.regex.Pattern;

/**
 * Reads a policy from YAML text and validates it completely: every problem is collected with its
 * path ({@code tiers[2].mayPreempt[0]: unknown tier "trainng"}) before anything is returned, so an
 * SRE fixes a file in one round. Pure: text in, {@link Policy} or {@link PolicyValidationException}
 * out.
 */
public final class PolicyParser {
  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
  private static final Pattern NAME = Pattern.compile("[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?");

  private final List<String> problems = new ArrayList<>();

  private PolicyParser() {}

  /** A policy is a page of YAML; far more is a mistake or an attack, refused before parsing. */
  public static final int MAX_CHARS = 1 << 20;

  /** YAML parsing time grows with the square of a line's length: cap it before parsing. */
  public static final int MAX_LINE_CHARS = 4096;

  /** Far more tiers than any cluster needs; keeps validation (did-you-mean) cheap. */
  public static final int MAX_TIERS = 256;

  /** Problems listed in full; the rest are counted, so a broken file stays a readable answer. */
  static final int MAX_PROBLEMS = 100;

  /** Parses and validates; {@code source} names the file in messages. */
  public static Policy parse(String yaml, String source) {
    checkShape(yaml, source);
    JsonNode root;
    try (com.fasterxml.jackson.core.JsonParser docs = YAML.getFactory().createParser(yaml)) {
      root = YAML.readTree(docs);
      com.fasterxml.jackson.core.JsonToken next = docs.nextToken();
      if (next != null && next != com.fasterxml.jackson.core.JsonToken.VALUE_NULL) {
        throw new PolicyValidationException(
            source,
            List.of(
                "$: holds more than one YAML document (\"---\"); a policy is exactly one,"
                    + " and a second would be silently ignored"));
      }
    } catch (PolicyValidationException e) {
      throw e;
    } catch (Exception e) {
      throw new PolicyValidationException(
          source, List.of("not valid YAML: " + firstLine(e.getMessage())));
    }
    if (root == null || !root.isObject()) {
      throw new PolicyValidationException(
          source, List.of("$: expected a mapping at the top level"));
    }
    PolicyParser p = new PolicyParser();
    Policy policy = p.policy(root);
    if (!p.problems.isEmpty()) {
      List<String> shown =
          new ArrayList<>(p.problems.subList(0, Math.min(MAX_PROBLEMS, p.problems.size())));
      if (p.problems.size() > MAX_PROBLEMS) {
        shown.add("... and " + (p.problems.size() - MAX_PROBLEMS) + " more problems");
      }
      throw new PolicyValidationException(source, shown);
    }
    return policy;
  }

  /** Size and line length, in one linear pass, before any YAML parser sees the text. */
  private static void checkShape(String yaml, String source) {
    if (yaml.length() > MAX_CHARS) {
      throw new PolicyValidationException(
          source,
          List.of("$: " + yaml.length() + " characters; a policy may have at most " + MAX_CHARS));
    }
    int line = 1;
    int start = 0;
    for (int i = 0; i <= yaml.length(); i++) {
      if (i == yaml.length() || yaml.charAt(i) == '\n') {
        if (i - start > MAX_LINE_CHARS) {
          throw new PolicyValidationException(
              source,
              List.of(
                  "line "
                      + line
                      + ": "
                      + (i - start)
                      + " characters; a line may have at most "
                      + MAX_LINE_CHARS));
        }
        line++;
        start = i + 1;
      }
    }
  }

  private Policy policy(JsonNode root) {
    keys(
        root,
        "",
        "apiVersion",
        "kind",
        "cluster",
        "defaultTier",
        "tiers",
        "preemption",
        "overrides");
    String api = text(root, "", "apiVersion").orElse(null);
    if (api == null) {
      problem("apiVersion", "required; this version reads " + Policy.API_VERSION);
    } else if (!api.equals(Policy.API_VERSION)) {
      problem(
          "apiVersion", "unsupported \"" + api + "\"; this version reads " + Policy.API_VERSION);
    }
    text(root, "", "kind")
        .filter(k -> !k.equals(Policy.KIND))
        .ifPresent(k -> problem("kind", "must be " + Policy.KIND + ", got \"" + k + "\""));
    ClusterSpec cluster = new ClusterParser(this).cluster(root.path("cluster"));
    List<Tier> tiers = tiers(root.path("tiers"), cluster);
    String defaultTier = text(root, "", "defaultTier").orElse(null);
    Set<String> names = new HashSet<>();
    tiers.forEach(t -> names.add(t.name()));
    if (defaultTier == null) {
      problem("defaultTier", "required: the tier of pods no rule matches");
    } else if (!names.contains(defaultTier)) {
      problem("defaultTier", "unknown tier \"" + defaultTier + "\"" + hint(defaultTier, names));
    }
    PreemptionSafety safety = safety(root.path("preemption"), tiers);
    Overrides overrides = overrides(root.path("overrides"));
    checkPreemptionGraph(tiers);
    checkFallbacks(tiers, safety);
    return new Policy(cluster, tiers, defaultTier, safety, overrides);
  }

  private List<Tier> tiers(JsonNode arr, ClusterSpec cluster) {
    List<Tier> out = new ArrayList<>();
    if (!arr.isArray() || arr.isEmpty()) {
      problem("tiers", "required: a list of at least one tier, highest first");
      return out;
    }
    if (arr.size() > MAX_TIERS) {
      problem("tiers", arr.size() + " tiers; a policy may have at most " + MAX_TIERS);
      return out;
    }
    Set<String> seen = new HashSet<>();
    for (int i = 0; i < arr.size(); i++) {
      String p = "tiers[" + i + "]";
      JsonNode t = arr.get(i);
      if (!t.isObject()) {
        problem(p, "expected a mapping");
        continue;
      }
      keys(
          t,
          p,
          "name",
          "match",
          "slurm",
          "mayPreempt",
          "preemptible",
          "graceTime",
          "topology",
          "maxNodes",
          "riskGpuOverlapWithSlurmJobs",
          "shareGpus");
      String name = text(t, p, "name").orElse("");
      if (!NAME.matcher(name).matches()) {
        problem(p + ".name", "required: a lower-case DNS label, got \"" + name + "\"");
      } else if (!seen.add(name)) {
        problem(p + ".name", "duplicate tier \"" + name + "\"");
      }
      Optional<TierMatch> match =
          t.has("match") ? Optional.of(match(t.get("match"), p + ".match")) : Optional.empty();
      SlurmSettings slurm = slurm(t.path("slurm"), p + ".slurm", cluster);
      Tier.TopologyDefault topo =
          text(t, p, "topology")
              .map(
                  v ->
                      switch (v) {
                        case "none" -> Tier.TopologyDefault.NONE;
                        case "nvlink-domain" -> Tier.TopologyDefault.NVLINK_DOMAIN;
                        default -> {
                          problem(
                              p + ".topology",
                              "unknown topology \"" + v + "\"; use none or nvlink-domain");
                          yield Tier.TopologyDefault.NONE;
                        }
                      })
              .orElse(Tier.TopologyDefault.NONE);
      if (topo == Tier.TopologyDefault.NVLINK_DOMAIN && cluster.nvlinkDomainFeatures().isEmpty()) {
        problem(p + ".topology", "nvlink-domain needs cluster.nvlinkDomainFeatures");
      }
      out.add(
          new Tier(
              name,
              match,
              slurm,
              strings(t, p, "mayPreempt"),
              bool(t, p, "preemptible", false),
              duration(t, p, "graceTime").orElse(Duration.ZERO),
              topo,
              maxNodes(t, p),
              bool(t, p, "riskGpuOverlapWithSlurmJobs", false),
              shareGpus(t, p, cluster)));
    }
    return out;
  }

  private boolean shareGpus(JsonNode t, String p, ClusterSpec cluster) {
    boolean share = bool(t, p, "shareGpus", false);
    if (share && cluster.gpuShares().isEmpty()) {
      problem(
          p + ".shareGpus",
          "needs cluster.gpuShares (the Slurm shard GRES and how many shares each GPU has)");
    }
    return share;
  }

  private int maxNodes(JsonNode t, String p) {
    JsonNode n = t.path("maxNodes");
    if (n.isMissingNode()) {
      return 1;
    }
    if (!n.canConvertToInt() || n.asInt() < 1 || n.asInt() > WellKnown.MAX_NODES) {
      problem(p + ".maxNodes", "expected a whole number from 1 to " + WellKnown.MAX_NODES);
      return 1;
    }
    return n.asInt();
  }

  private TierMatch match(JsonNode m, String p) {
    if (!m.isObject()) {
      problem(p, "expected a mapping");
      return new TierMatch(
          List.of(), OptionalInt.empty(), OptionalInt.empty(), List.of(), Map.of(), Map.of());
    }
    keys(m, p, "priorityClassNames", "priorityRange", "namespaces", "labels", "annotations");
    OptionalInt min = OptionalInt.empty();
    OptionalInt max = OptionalInt.empty();
    JsonNode range = m.path("priorityRange");
    if (!range.isMissingNode()) {
      String rp = p + ".priorityRange";
      keys(range, rp, "min", "max");
      min = integer(range, rp, "min");
      max = integer(range, rp, "max");
      if (min.isPresent() && max.isPresent() && min.getAsInt() > max.getAsInt()) {
        problem(rp, "min " + min.getAsInt() + " is greater than max " + max.getAsInt());
      }
    }
    TierMatch tm =
        new TierMatch(
            strings(m, p, "priorityClassNames"),
            min,
            max,
            strings(m, p, "namespaces"),
            stringMap(m, p, "labels"),
            stringMap(m, p, "annotations"));
    if (tm.priorityClassNames().isEmpty()
        && min.isEmpty()
        && max.isEmpty()
        && tm.namespaces().isEmpty()
        && tm.labels().isEmpty()
        && tm.annotations().isEmpty()) {
      problem(p, "matches every pod; leave it out and make this the defaultTier instead");
    }
    return tm;
  }

  private SlurmSettings slurm(JsonNode s, String p, ClusterSpec cluster) {
    if (!s.isObject()) {
      problem(p, "required: at least a partition or a qos");
      s = YAML.createObjectNode();
    }
    keys(
        s,
        p,
        "partition",
        "qos",
        "account",
        "priority",
        "nice",
        "timeLimit",
        "exclusive",
        "reservation",
        "licenses",
        "constraint",
        "fallbackPartition",
        "fallbackQos");
    Optional<String> partition = text(s, p, "partition");
    Optional<String> qos = text(s, p, "qos");
    if (partition.isEmpty() && qos.isEmpty() && s.size() > 0) {
      problem(p, "needs a partition or a qos");
    }
    if (cluster.preemptMode() == ClusterSpec.PreemptMode.QOS && qos.isEmpty() && s.size() > 0) {
      problem(p + ".qos", "required when cluster.preemptMode is qos");
    }
    OptionalInt limit = OptionalInt.empty();
    Optional<String> tl = text(s, p, "timeLimit");
    if (tl.isPresent() && !tl.get().equals("unlimited")) {
      try {
        Duration d = Durations.parse(tl.get());
        limit = OptionalInt.of((int) Math.max(1, (d.getSeconds() + 59) / 60));
      } catch (IllegalArgumentException e) {
        problem(p + ".timeLimit", e.getMessage() + " or unlimited");
      }
    }
    OptionalInt nice = integer(s, p, "nice");
    nice.ifPresent(
        n -> {
          if (n < -2147483645 || n > 2147483645) {
            problem(p + ".nice", "out of range");
          }
        });
    OptionalLong priority = OptionalLong.empty();
    OptionalInt pr = integer(s, p, "priority");
    if (pr.isPresent()) {
      if (pr.getAsInt() < 1) {
        problem(p + ".priority", "must be a positive number (Slurm priorities are 1..4294967293)");
      }
      priority = OptionalLong.of(pr.getAsInt());
    }
    return new SlurmSettings(
        partition,
        qos,
        text(s, p, "account"),
        priority,
        nice,
        limit,
        bool(s, p, "exclusive", false),
        text(s, p, "reservation"),
        text(s, p, "licenses"),
        text(s, p, "constraint"),
        text(s, p, "fallbackPartition"),
        text(s, p, "fallbackQos"));
  }

  private PreemptionSafety safety(JsonNode s, List<Tier> tiers) {
    String p = "preemption";
    if (s.isMissingNode()) {
      return new PreemptionSafety(false, List.of(), Map.of());
    }
    keys(s, p, "dryRun", "budgets", "minRuntime");
    Set<String> names = tierNames(tiers);
    List<PreemptionSafety.Budget> budgets = new ArrayList<>();
    JsonNode b = s.path("budgets");
    if (!b.isMissingNode() && !b.isArray()) {
      problem(p + ".budgets", "expected a list");
    }
    for (int i = 0; b.isArray() && i < b.size(); i++) {
      String bp = p + ".budgets[" + i + "]";
      JsonNode e = b.get(i);
      keys(e, bp, "tier", "maxGpus", "maxNodes", "window");
      String tier = text(e, bp, "tier").orElse("");
      checkTierRef(bp + ".tier", tier, names);
      OptionalInt gpus = integer(e, bp, "maxGpus");
      OptionalInt nodes = integer(e, bp, "maxNodes");
      if (gpus.isEmpty() && nodes.isEmpty()) {
        problem(bp, "set maxGpus, maxNodes or both");
      }
      gpus.ifPresent(v -> nonNegative(bp + ".maxGpus", v));
      nodes.ifPresent(v -> nonNegative(bp + ".maxNodes", v));
      Optional<Duration> window = duration(e, bp, "window");
      if (window.isEmpty()) {
        problem(bp + ".window", "required, e.g. 10m");
      }
      if (budgets.stream().anyMatch(x -> x.tier().equals(tier))) {
        problem(bp + ".tier", "tier \"" + tier + "\" already has a budget; one per tier");
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
      problem(p + ".minRuntime", "expected a mapping of tier: duration");
    }
    mr.fields()
        .forEachRemaining(
            f -> {
              String mp = p + ".minRuntime." + f.getKey();
              checkTierRef(mp, f.getKey(), names);
              tiers.stream()
                  .filter(t -> t.name().equals(f.getKey()) && !t.preemptible())
                  .findFirst()
                  .ifPresent(
                      t ->
                          problem(
                              mp,
                              "tier \""
                                  + t.name()
                                  + "\" is not preemptible, so a minimum runtime means nothing"));
              try {
                minRuntime.put(f.getKey(), Durations.parse(f.getValue().asText()));
              } catch (IllegalArgumentException e) {
                problem(mp, e.getMessage());
              }
            });
    return new PreemptionSafety(bool(s, p, "dryRun", false), budgets, minRuntime);
  }

  /** One grant ({@code {namespaces, keys}}) or a list of them. */
  private Overrides overrides(JsonNode o) {
    if (o.isMissingNode()) {
      return new Overrides(List.of());
    }
    if (!o.isArray()) {
      return new Overrides(List.of(grant(o, "overrides")));
    }
    List<Overrides.Grant> grants = new ArrayList<>();
    for (int i = 0; i < o.size(); i++) {
      grants.add(grant(o.get(i), "overrides[" + i + "]"));
    }
    return new Overrides(grants);
  }

  private Overrides.Grant grant(JsonNode o, String p) {
    if (!o.isObject()) {
      problem(p, "expected a mapping with namespaces and keys");
      return new Overrides.Grant(Set.of(), Set.of());
    }
    keys(o, p, "namespaces", "keys");
    List<String> keys = strings(o, p, "keys");
    for (int i = 0; i < keys.size(); i++) {
      if (!Overrides.KNOWN_KEYS.contains(keys.get(i))) {
        problem(
            p + ".keys[" + i + "]",
            "unknown override \""
                + keys.get(i)
                + "\"; known: "
                + Overrides.KNOWN_KEYS.stream().sorted().toList());
      }
    }
    return new Overrides.Grant(
        new LinkedHashSet<>(strings(o, p, "namespaces")), new LinkedHashSet<>(keys));
  }

  /** mayPreempt: known tiers, lower than the preemptor, preemptible; and no cycles. */
  private void checkPreemptionGraph(List<Tier> tiers) {
    Set<String> names = tierNames(tiers);
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
          problem(p, "unknown tier \"" + target + "\"" + hint(target, names));
        } else if (target.equals(t.name())) {
          problem(p, "tier \"" + t.name() + "\" may not preempt itself");
        } else if (rank.get(target) < i) {
          problem(
              p,
              "tier \""
                  + t.name()
                  + "\" may not preempt the higher tier \""
                  + target
                  + "\"; tiers are listed highest first");
        } else if (tiers.get(rank.get(target)).preemptible() == false) {
          problem(p, "tier \"" + target + "\" is not preemptible (set preemptible: true on it)");
        }
      }
    }
    findCycle(tiers)
        .ifPresent(c -> problem("tiers", "preemption cycle: " + String.join(" -> ", c)));
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
  private void checkFallbacks(List<Tier> tiers, PreemptionSafety safety) {
    Set<String> budgeted = new HashSet<>();
    safety.budgets().forEach(b -> budgeted.add(b.tier()));
    for (int i = 0; i < tiers.size(); i++) {
      Tier t = tiers.get(i);
      boolean needs = !t.mayPreempt().isEmpty() && (safety.dryRun() || budgeted.contains(t.name()));
      if (needs && t.slurm().fallbackPartition().isEmpty() && t.slurm().fallbackQos().isEmpty()) {
        problem(
            "tiers[" + i + "].slurm",
            "needs fallbackPartition or fallbackQos (a non-preempting"
                + " place for its placeholders) because "
                + (safety.dryRun() ? "preemption.dryRun is on" : "it has a budget"));
      }
    }
  }

  // ---------------------------------------------------------------- readers with paths

  void problem(String path, String message) {
    problems.add((path.isEmpty() ? "$" : path) + ": " + message);
  }

  void keys(JsonNode node, String p, String... allowed) {
    if (!node.isObject()) {
      return;
    }
    Set<String> ok = Set.of(allowed);
    node.fieldNames()
        .forEachRemaining(
            k -> {
              if (!ok.contains(k)) {
                problem(join(p, k), "unknown key" + hint(k, ok));
              }
            });
  }

  private static String join(String p, String k) {
    return p.isEmpty() ? k : p + "." + k;
  }

  private <T> Optional<T> scalar(
      JsonNode n,
      String p,
      String k,
      String expected,
      Function<JsonNode, T> read,
      java.util.function.Predicate<JsonNode> is) {
    JsonNode v = n.path(k);
    if (v.isMissingNode() || v.isNull()) {
      return Optional.empty();
    }
    if (!is.test(v)) {
      problem(join(p, k), "expected " + expected + ", got " + describe(v));
      return Optional.empty();
    }
    return Optional.of(read.apply(v));
  }

  Optional<String> text(JsonNode n, String p, String k) {
    return scalar(n, p, k, "a string", JsonNode::asText, JsonNode::isValueNode)
        .filter(s -> !s.isBlank());
  }

  boolean bool(JsonNode n, String p, String k, boolean dflt) {
    return scalar(n, p, k, "true or false", JsonNode::asBoolean, JsonNode::isBoolean).orElse(dflt);
  }

  OptionalInt integer(JsonNode n, String p, String k) {
    Optional<Integer> v =
        scalar(n, p, k, "a whole number", JsonNode::asInt, JsonNode::canConvertToInt);
    return v.map(OptionalInt::of).orElse(OptionalInt.empty());
  }

  private Optional<Duration> duration(JsonNode n, String p, String k) {
    return text(n, p, k)
        .flatMap(
            s -> {
              try {
                return Optional.of(Durations.parse(s));
              } catch (IllegalArgumentException e) {
                problem(join(p, k), e.getMessage());
                return Optional.empty();
              }
            });
  }

  List<String> strings(JsonNode n, String p, String k) {
    JsonNode v = n.path(k);
    List<String> out = new ArrayList<>();
    if (v.isMissingNode() || v.isNull()) {
      return out;
    }
    if (!v.isArray()) {
      problem(join(p, k), "expected a list of strings, got " + describe(v));
      return out;
    }
    for (int i = 0; i < v.size(); i++) {
      if (!v.get(i).isTextual()) {
        problem(join(p, k) + "[" + i + "]", "expected a string, got " + describe(v.get(i)));
      } else {
        out.add(v.get(i).asText());
      }
    }
    return out;
  }

  Map<String, String> stringMap(JsonNode n, String p, String k) {
    JsonNode v = n.path(k);
    Map<String, String> out = new LinkedHashMap<>();
    if (v.isMissingNode() || v.isNull()) {
      return out;
    }
    if (!v.isObject()) {
      problem(join(p, k), "expected a mapping, got " + describe(v));
      return out;
    }
    v.fields()
        .forEachRemaining(
            f -> {
              if (!f.getValue().isValueNode()) {
                problem(join(p, k) + "." + f.getKey(), "expected a string value");
              } else {
                out.put(f.getKey(), f.getValue().asText());
              }
            });
    return out;
  }

  private void nonNegative(String p, int v) {
    if (v < 0) {
      problem(p, "must not be negative");
    }
  }

  private void checkTierRef(String p, String tier, Set<String> names) {
    if (!names.contains(tier)) {
      problem(p, "unknown tier \"" + tier + "\"" + hint(tier, names));
    }
  }

  <E extends Enum<E>> E enumValue(String p, String v, Class<E> type) {
    for (E e : type.getEnumConstants()) {
      if (e.name().equalsIgnoreCase(v)) {
        return e;
      }
    }
    problem(
        p,
        "unknown value \""
            + v
            + "\"; use one of "
            + java.util.Arrays.stream(type.getEnumConstants())
                .map(e -> e.name().toLowerCase())
                .toList());
    return null;
  }

  private static Set<String> tierNames(List<Tier> tiers) {
    Set<String> s = new LinkedHashSet<>();
    tiers.forEach(t -> s.add(t.name()));
    return s;
  }

  private static String describe(JsonNode v) {
    return v.isTextual() ? "\"" + v.asText() + "\"" : v.getNodeType().toString().toLowerCase();
  }

  /** ", did you mean "x"?" for a near miss (edit distance ≤ 2). */
  /** A did-you-mean for problems that will be listed; none once the list is full (stays linear). */
  private String hint(String given, Set<String> options) {
    return problems.size() >= MAX_PROBLEMS ? "" : suggest(given, options);
  }

  static String suggest(String given, Set<String> options) {
    String best = null;
    int bestD = 3;
    for (String o : options) {
      if (Math.abs(o.length() - given.length()) >= bestD) {
        continue; // the distance is at least the length difference
      }
      int d = distance(given, o);
      if (d < bestD) {
        bestD = d;
        best = o;
      }
    }
    return best == null ? "" : ", did you mean \"" + best + "\"?";
  }

  private static int distance(String a, String b) {
    int[] prev = new int[b.length() + 1];
    for (int j = 0; j <= b.length(); j++) {
      prev[j] = j;
    }
    for (int i = 1; i <= a.length(); i++) {
      int[] cur = new int[b.length() + 1];
      cur[0] = i;
      for (int j = 1; j <= b.length(); j++) {
        cur[j] =
            Math.min(
                Math.min(cur[j - 1] + 1, prev[j] + 1),
                prev[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1));
      }
      prev = cur;
    }
    return prev[b.length()];
  }

  private static String firstLine(String s) {
    return s == null ? "" : s.lines().findFirst().orElse("");
  }
}
