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
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.Set;
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

  private final PolicyReader r = new PolicyReader();

  private PolicyParser() {}

  /** A policy is a page of YAML; far more is a mistake or an attack, refused before parsing. */
  public static final int MAX_CHARS = 1 << 20;

  /** YAML parsing time grows with the square of a line's length: cap it before parsing. */
  public static final int MAX_LINE_CHARS = 4096;

  /** Far more tiers than any cluster needs; keeps validation (did-you-mean) cheap. */
  public static final int MAX_TIERS = 256;

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
    List<String> problems = p.r.shown();
    if (!problems.isEmpty()) {
      throw new PolicyValidationException(source, problems);
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
    r.keys(
        root,
        "",
        "apiVersion",
        "kind",
        "cluster",
        "defaultTier",
        "tiers",
        "preemption",
        "overrides");
    String api = r.text(root, "", "apiVersion").orElse(null);
    if (api == null) {
      r.problem("apiVersion", "required; this version reads " + Policy.API_VERSION);
    } else if (!api.equals(Policy.API_VERSION)) {
      r.problem(
          "apiVersion", "unsupported \"" + api + "\"; this version reads " + Policy.API_VERSION);
    }
    r.text(root, "", "kind")
        .filter(k -> !k.equals(Policy.KIND))
        .ifPresent(k -> r.problem("kind", "must be " + Policy.KIND + ", got \"" + k + "\""));
    ClusterSpec cluster = new ClusterParser(r).cluster(root.path("cluster"));
    List<Tier> tiers = tiers(root.path("tiers"), cluster);
    String defaultTier = r.text(root, "", "defaultTier").orElse(null);
    Set<String> names = new HashSet<>();
    tiers.forEach(t -> names.add(t.name()));
    if (defaultTier == null) {
      r.problem("defaultTier", "required: the tier of pods no rule matches");
    } else if (!names.contains(defaultTier)) {
      r.problem("defaultTier", "unknown tier \"" + defaultTier + "\"" + r.hint(defaultTier, names));
    }
    PreemptionParser preemption = new PreemptionParser(r);
    PreemptionSafety safety = preemption.safety(root.path("preemption"), tiers);
    Overrides overrides = overrides(root.path("overrides"));
    preemption.checkPreemptionGraph(tiers);
    preemption.checkFallbacks(tiers, safety);
    return new Policy(cluster, tiers, defaultTier, safety, overrides);
  }

  private List<Tier> tiers(JsonNode arr, ClusterSpec cluster) {
    List<Tier> out = new ArrayList<>();
    if (!arr.isArray() || arr.isEmpty()) {
      r.problem("tiers", "required: a list of at least one tier, highest first");
      return out;
    }
    if (arr.size() > MAX_TIERS) {
      r.problem("tiers", arr.size() + " tiers; a policy may have at most " + MAX_TIERS);
      return out;
    }
    Set<String> seen = new HashSet<>();
    for (int i = 0; i < arr.size(); i++) {
      String p = "tiers[" + i + "]";
      JsonNode t = arr.get(i);
      if (!t.isObject()) {
        r.problem(p, "expected a mapping");
        continue;
      }
      r.keys(
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
      String name = r.text(t, p, "name").orElse("");
      if (!NAME.matcher(name).matches()) {
        r.problem(p + ".name", "required: a lower-case DNS label, got \"" + name + "\"");
      } else if (!seen.add(name)) {
        r.problem(p + ".name", "duplicate tier \"" + name + "\"");
      }
      Optional<TierMatch> match =
          t.has("match") ? Optional.of(match(t.get("match"), p + ".match")) : Optional.empty();
      SlurmSettings slurm = slurm(t.path("slurm"), p + ".slurm", cluster);
      Tier.TopologyDefault topo =
          r.text(t, p, "topology")
              .map(
                  v ->
                      switch (v) {
                        case "none" -> Tier.TopologyDefault.NONE;
                        case "nvlink-domain" -> Tier.TopologyDefault.NVLINK_DOMAIN;
                        default -> {
                          r.problem(
                              p + ".topology",
                              "unknown topology \"" + v + "\"; use none or nvlink-domain");
                          yield Tier.TopologyDefault.NONE;
                        }
                      })
              .orElse(Tier.TopologyDefault.NONE);
      if (topo == Tier.TopologyDefault.NVLINK_DOMAIN && cluster.nvlinkDomainFeatures().isEmpty()) {
        r.problem(p + ".topology", "nvlink-domain needs cluster.nvlinkDomainFeatures");
      }
      out.add(
          new Tier(
              name,
              match,
              slurm,
              r.strings(t, p, "mayPreempt"),
              r.bool(t, p, "preemptible", false),
              r.duration(t, p, "graceTime").orElse(Duration.ZERO),
              topo,
              maxNodes(t, p),
              r.bool(t, p, "riskGpuOverlapWithSlurmJobs", false),
              shareGpus(t, p, cluster)));
    }
    return out;
  }

  private boolean shareGpus(JsonNode t, String p, ClusterSpec cluster) {
    boolean share = r.bool(t, p, "shareGpus", false);
    if (share && cluster.gpuShares().isEmpty() && cluster.migProfiles().isEmpty()) {
      r.problem(
          p + ".shareGpus",
          "needs cluster.gpuShares (the Slurm shard GRES and how many shares each GPU has) or"
              + " cluster.migProfiles (MIG profiles and their Slurm GRES types)");
    }
    return share;
  }

  private int maxNodes(JsonNode t, String p) {
    JsonNode n = t.path("maxNodes");
    if (n.isMissingNode()) {
      return 1;
    }
    if (!n.canConvertToInt() || n.asInt() < 1 || n.asInt() > WellKnown.MAX_NODES) {
      r.problem(p + ".maxNodes", "expected a whole number from 1 to " + WellKnown.MAX_NODES);
      return 1;
    }
    return n.asInt();
  }

  private TierMatch match(JsonNode m, String p) {
    if (!m.isObject()) {
      r.problem(p, "expected a mapping");
      return new TierMatch(
          List.of(), OptionalInt.empty(), OptionalInt.empty(), List.of(), Map.of(), Map.of());
    }
    r.keys(m, p, "priorityClassNames", "priorityRange", "namespaces", "labels", "annotations");
    OptionalInt min = OptionalInt.empty();
    OptionalInt max = OptionalInt.empty();
    JsonNode range = m.path("priorityRange");
    if (!range.isMissingNode()) {
      String rp = p + ".priorityRange";
      r.keys(range, rp, "min", "max");
      min = r.integer(range, rp, "min");
      max = r.integer(range, rp, "max");
      if (min.isPresent() && max.isPresent() && min.getAsInt() > max.getAsInt()) {
        r.problem(rp, "min " + min.getAsInt() + " is greater than max " + max.getAsInt());
      }
    }
    TierMatch tm =
        new TierMatch(
            r.strings(m, p, "priorityClassNames"),
            min,
            max,
            r.strings(m, p, "namespaces"),
            r.stringMap(m, p, "labels"),
            r.stringMap(m, p, "annotations"));
    if (tm.priorityClassNames().isEmpty()
        && min.isEmpty()
        && max.isEmpty()
        && tm.namespaces().isEmpty()
        && tm.labels().isEmpty()
        && tm.annotations().isEmpty()) {
      r.problem(p, "matches every pod; leave it out and make this the defaultTier instead");
    }
    return tm;
  }

  private SlurmSettings slurm(JsonNode s, String p, ClusterSpec cluster) {
    if (!s.isObject()) {
      r.problem(p, "required: at least a partition or a qos");
      s = YAML.createObjectNode();
    }
    r.keys(
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
    Optional<String> partition = r.text(s, p, "partition");
    Optional<String> qos = r.text(s, p, "qos");
    if (partition.isEmpty() && qos.isEmpty() && s.size() > 0) {
      r.problem(p, "needs a partition or a qos");
    }
    if (cluster.preemptMode() == ClusterSpec.PreemptMode.QOS && qos.isEmpty() && s.size() > 0) {
      r.problem(p + ".qos", "required when cluster.preemptMode is qos");
    }
    OptionalInt limit = OptionalInt.empty();
    Optional<String> tl = r.text(s, p, "timeLimit");
    if (tl.isPresent() && !tl.get().equals("unlimited")) {
      try {
        Duration d = Durations.parse(tl.get());
        limit = OptionalInt.of((int) Math.max(1, (d.getSeconds() + 59) / 60));
      } catch (IllegalArgumentException e) {
        r.problem(p + ".timeLimit", e.getMessage() + " or unlimited");
      }
    }
    OptionalInt nice = r.integer(s, p, "nice");
    nice.ifPresent(
        n -> {
          if (n < -2147483645 || n > 2147483645) {
            r.problem(p + ".nice", "out of range");
          }
        });
    OptionalLong priority = OptionalLong.empty();
    OptionalInt pr = r.integer(s, p, "priority");
    if (pr.isPresent()) {
      if (pr.getAsInt() < 1) {
        r.problem(
            p + ".priority", "must be a positive number (Slurm priorities are 1..4294967293)");
      }
      priority = OptionalLong.of(pr.getAsInt());
    }
    return new SlurmSettings(
        partition,
        qos,
        r.text(s, p, "account"),
        priority,
        nice,
        limit,
        r.bool(s, p, "exclusive", false),
        r.text(s, p, "reservation"),
        r.text(s, p, "licenses"),
        r.text(s, p, "constraint"),
        r.text(s, p, "fallbackPartition"),
        r.text(s, p, "fallbackQos"));
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
      r.problem(p, "expected a mapping with namespaces and keys");
      return new Overrides.Grant(Set.of(), Set.of());
    }
    r.keys(o, p, "namespaces", "keys");
    List<String> keys = r.strings(o, p, "keys");
    for (int i = 0; i < keys.size(); i++) {
      if (!Overrides.KNOWN_KEYS.contains(keys.get(i))) {
        r.problem(
            p + ".keys[" + i + "]",
            "unknown override \""
                + keys.get(i)
                + "\"; known: "
                + Overrides.KNOWN_KEYS.stream().sorted().toList());
      }
    }
    return new Overrides.Grant(
        new LinkedHashSet<>(r.strings(o, p, "namespaces")), new LinkedHashSet<>(keys));
  }

  private static String firstLine(String s) {
    return s == null ? "" : s.lines().findFirst().orElse("");
  }
}
