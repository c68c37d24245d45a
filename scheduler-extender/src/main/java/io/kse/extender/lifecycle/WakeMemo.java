package io.kse.extender.lifecycle;

import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The members this extender woke, until the informer shows it: which job each was woken for and the
 * Kubernetes node it was sent to. The rules wake a member once per job; a member keeps the seat it
 * was sent to even before its annotations come back.
 */
final class WakeMemo {
  /** Woken for job {@code jobId}, sent to {@code node}. */
  record Woken(long jobId, String node) {}

  private final Map<String, Woken> byUid = new ConcurrentHashMap<>();

  Optional<Woken> of(String uid) {
    return Optional.ofNullable(byUid.get(uid));
  }

  /** The job the member was woken for, 0 if none. */
  long jobOf(String uid) {
    return of(uid).map(Woken::jobId).orElse(0L);
  }

  void woke(String uid, long jobId, String node) {
    byUid.put(uid, new Woken(jobId, node));
  }

  void forget(String uid) {
    byUid.remove(uid);
  }
}
