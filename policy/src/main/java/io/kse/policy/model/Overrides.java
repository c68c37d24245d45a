package io.kse.policy.model;

import java.util.Set;

/**
 * Which namespaces may override placement with {@code kse.io/*} pod annotations, and which keys.
 */
public record Overrides(Set<String> namespaces, Set<String> keys) {
  /** Every key a pod annotation may override. */
  public static final Set<String> KNOWN_KEYS =
      Set.of("tier", "partition", "qos", "account", "time-limit", "constraint", "nice");

  public Overrides {
    namespaces = Set.copyOf(namespaces);
    keys = Set.copyOf(keys);
  }

  public boolean allows(String namespace, String key) {
    return namespaces.contains(namespace) && keys.contains(key);
  }
}
