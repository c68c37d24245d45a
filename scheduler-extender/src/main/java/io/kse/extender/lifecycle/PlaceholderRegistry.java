package io.kse.extender.lifecycle;

import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.UnaryOperator;

/** Placeholder state by pod UID: O(1), lock-free reads for the filter path. */
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

  public void update(String uid, UnaryOperator<PlaceholderState> f) {
    byUid.computeIfPresent(uid, (k, old) -> f.apply(old));
  }

  public void remove(String uid) {
    byUid.remove(uid);
  }

  /**
   * How many placeholders are in the state named (Submitting, Submitted, Rejected, SubmitFailed).
   */
  public long count(String state) {
    return byUid.values().stream().filter(s -> s.getClass().getSimpleName().equals(state)).count();
  }

  public static final java.util.List<String> STATES =
      java.util.List.of("Submitting", "Submitted", "Rejected", "SubmitFailed");

  public int size() {
    return byUid.size();
  }
}
