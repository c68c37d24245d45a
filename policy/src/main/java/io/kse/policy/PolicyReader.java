package io.kse.policy;

import com.fasterxml.jackson.databind.JsonNode;
import io.kse.policy.model.Tier;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.function.Function;

/**
 * Reads the policy's YAML tree value by value, each with its path, and collects every problem in
 * one list ({@code tiers[2].mayPreempt[0]: unknown tier "trainng"}): the parsers of each section
 * ({@link PolicyParser}, {@link ClusterParser}, {@link PreemptionParser}) share one, so a broken
 * file gets one answer listing all its problems.
 */
final class PolicyReader {
  /** Problems listed in full; the rest are counted, so a broken file stays a readable answer. */
  static final int MAX_PROBLEMS = 100;

  private final List<String> problems = new ArrayList<>();

  /** The problems as they are shown: the first {@link #MAX_PROBLEMS}, then how many more. */
  List<String> shown() {
    List<String> shown =
        new ArrayList<>(problems.subList(0, Math.min(MAX_PROBLEMS, problems.size())));
    if (problems.size() > MAX_PROBLEMS) {
      shown.add("... and " + (problems.size() - MAX_PROBLEMS) + " more problems");
    }
    return shown;
  }

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

  static String join(String p, String k) {
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

  Optional<Duration> duration(JsonNode n, String p, String k) {
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

  void nonNegative(String p, int v) {
    if (v < 0) {
      problem(p, "must not be negative");
    }
  }

  void checkTierRef(String p, String tier, Set<String> names) {
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

  static Set<String> tierNames(List<Tier> tiers) {
    Set<String> s = new LinkedHashSet<>();
    tiers.forEach(t -> s.add(t.name()));
    return s;
  }

  static String describe(JsonNode v) {
    return v.isTextual() ? "\"" + v.asText() + "\"" : v.getNodeType().toString().toLowerCase();
  }

  /** A did-you-mean for problems that will be listed; none once the list is full (stays linear). */
  String hint(String given, Set<String> options) {
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
}
