package io.kse.extender.lifecycle;

import io.kse.extender.k8s.EventReason;
import io.kse.extender.k8s.PodActions;
import io.kse.extender.k8s.PodActions.EvictResult;
import io.kse.extender.k8s.PodRef;
import io.kse.extender.metrics.ExtenderMetrics;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Evicts pods whose job no longer holds their node, until they are gone. A refusal by a
 * PodDisruptionBudget is an Event and a metric, retried with backoff; once {@code pdbOverride} has
 * passed the pod is deleted anyway, because its GPUs already belong to another Slurm job and two
 * owners of one GPU is worse than a disruption budget overrun (docs/runbook.md).
 */
final class Evictions {
  private static final Logger LOG = LoggerFactory.getLogger(Evictions.class);
  static final Duration MAX_BACKOFF = Duration.ofSeconds(30);

  /** After an accepted eviction the pod shows as terminating within moments; then ask again. */
  static final Duration RECHECK = Duration.ofSeconds(10);

  private record Attempt(Instant first, int attempts, Instant next, boolean inFlight) {}

  private final PodActions actions;
  private final ExtenderMetrics metrics;
  private final Clock clock;
  private final Duration pdbOverride;
  private final Map<String, Attempt> byUid = new ConcurrentHashMap<>();

  Evictions(PodActions actions, ExtenderMetrics metrics, Clock clock, Duration pdbOverride) {
    this.actions = actions;
    this.metrics = metrics;
    this.clock = clock;
    this.pdbOverride = pdbOverride;
  }

  /**
   * Whether an attempt is due now; if so it is marked in flight and the caller must {@link #run}.
   */
  boolean claim(String uid) {
    Instant now = clock.instant();
    boolean[] due = {false};
    byUid.compute(
        uid,
        (k, a) -> {
          if (a == null) {
            due[0] = true;
            return new Attempt(now, 0, now, true);
          }
          if (a.inFlight() || now.isBefore(a.next())) {
            return a;
          }
          due[0] = true;
          return new Attempt(a.first(), a.attempts(), a.next(), true);
        });
    return due[0];
  }

  /** One eviction attempt (a worker thread), after {@link #claim}. */
  void run(PodRef pod, String why, EventReason reason) {
    Attempt a = byUid.get(pod.uid());
    int attempt = a == null ? 1 : a.attempts() + 1;
    Instant first = a == null ? clock.instant() : a.first();
    if (attempt == 1) {
      actions.event(pod, reason, why + "; evicting the pod");
    }
    EvictResult r = actions.evict(pod, why);
    metrics.eviction(r.name().toLowerCase());
    Instant now = clock.instant();
    Duration wait = RECHECK;
    if (r == EvictResult.BLOCKED_BY_PDB) {
      if (!Duration.between(first, now).minus(pdbOverride).isNegative()) {
        LOG.warn(
            "pod_delete_past_pdb pod={} uid={} blockedForMs={} reason=\"{}\"",
            pod,
            pod.uid(),
            Duration.between(first, now).toMillis(),
            why);
        actions.event(
            pod,
            EventReason.EVICTION_BLOCKED,
            "a PodDisruptionBudget refused the eviction for "
                + Duration.between(first, now).toSeconds()
                + " s; deleting the pod anyway: its GPUs already belong to another Slurm job");
        actions.delete(pod, why);
      } else {
        // back off, but try again right when the override is due
        Duration untilOverride = Duration.between(now, first.plus(pdbOverride));
        wait = backoff(attempt).compareTo(untilOverride) < 0 ? backoff(attempt) : untilOverride;
        if (attempt == 1 || Integer.bitCount(attempt) == 1) { // 1st, 2nd, 4th, 8th…: not a flood
          actions.event(
              pod,
              EventReason.EVICTION_BLOCKED,
              "a PodDisruptionBudget refused the eviction (attempt "
                  + attempt
                  + "); retrying, and deleting the pod after "
                  + pdbOverride.toSeconds()
                  + " s: "
                  + why);
        }
      }
    } else if (r == EvictResult.FAILED) {
      wait = backoff(attempt);
    }
    byUid.put(pod.uid(), new Attempt(first, attempt, now.plus(wait), false));
  }

  /** The pod is gone or fine again: forget its attempts. */
  void forget(String uid) {
    byUid.remove(uid);
  }

  private static Duration backoff(int attempt) {
    return Duration.ofSeconds(Math.min(MAX_BACKOFF.toSeconds(), 1L << Math.min(5, attempt - 1)));
  }
}
