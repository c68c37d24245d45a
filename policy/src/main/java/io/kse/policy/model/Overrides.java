package io.kse.policy.model;

import java.util.List;
import java.util.Set;

/**
 * Which namespaces may override placement with {@code kse.io/*} pod annotations, and which keys:
 * one or more grants, each a set of namespaces and the keys they may set.
 */
public record Overrides(List<Grant> grants) {
  /** Every key a pod annotation may override. */
  public static final Set<String> KNOWN_KEYS =
      Set.of("tier", "partition", "qos", "account", "time-limit", "constraint", "nice", "nodes");

  /** These namespaces ({@code team-*} matches a prefix) may set these keys. */
  public record Grant(Set<String> namespaces, Set<String> keys) {
    public Grant {
      namespaces = Set.copyOf(namespaces);
      keys = Set.copyOf(keys);
    }

    boolean covers(String namespace) {
      return namespaces.contains(namespace)
          || namespaces.stream()
              .anyMatch(
                  n -> n.endsWith("*") && namespace.startsWith(n.substring(0, n.length() - 1)));
    }
  }

  public Overrides {
    grants = List.copyOf(grants);
  }

  /** One grant, as the single-mapping form of {@code overrides:} writes it. */
  public Overrides(Set<String> namespaces, Set<String> keys) {
    this(List.of(new Grant(namespaces, keys)));
  }

  public boolean allows(String namespace, String key) {
    return grants.stream().anyMatch(g -> g.keys().contains(key) && g.covers(namespace));
  }
}
