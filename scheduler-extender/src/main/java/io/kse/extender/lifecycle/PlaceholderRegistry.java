package io.kse.extender.lifecycle;

import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Placeholder state by placement key (a pod's UID, or its group's key): O(1), lock-free reads for
 * the filter path.
 */
public final class PlaceholderRegistry {
  private final Map<String, PlaceholderState> byUid = new ConcurrentHashMap<>();

  public Optional<PlaceholderState> get(String uid) {
    return Optional.ofNullable(byUid.get(uid));
  }

  public void put(String uid, PlaceholderState s) {
    byUid.put(uid, s);
  }

  /** Atomically claims the pod for submission; false when another caller already has it. */
  public boolean claim(
      String uid,
      PlaceholderState submitting,
      java.util.function.Predicate<PlaceholderState> mayReplace) {
    boolean[] won = {false};
    byUid.compute(
        uid,
        (k, old) -> {
          if (old == null || mayReplace.test(old)) {
            won[0] = true;
            return submitting;
          }
          return old;
        });
    return won[0];
  }

  public void remove(String uid) {
    byUid.remove(uid);
  }

  /** How many placeholders are in this state. */
  public long count(Class<? extends PlaceholderState> state) {
    return byUid.values().stream().filter(state::isInstance).count();
  }

  /** Every state there is: the sealed interface's own list, never a hand-kept copy. */
  public static final java.util.List<Class<? extends PlaceholderState>> STATES = states();

  @SuppressWarnings("unchecked")
  private static java.util.List<Class<? extends PlaceholderState>> states() {
    java.util.List<Class<? extends PlaceholderState>> out = new java.util.ArrayList<>();
    for (Class<?> c : PlaceholderState.class.getPermittedSubclasses()) {
      out.add((Class<? extends PlaceholderState>) c);
    }
    return java.util.List.copyOf(out);
  }

  /** Every state, as a live view: for gauges read at scrape time. */
  public java.util.Collection<PlaceholderState> current() {
    return java.util.Collections.unmodifiableCollection(byUid.values());
  }

  public int size() {
    return byUid.size();
  }
}
