package io.kse.extender.lifecycle;

import io.kse.extender.k8s.EventReason;
import io.kse.extender.k8s.PodActions;
import io.kse.extender.k8s.PodRef;
import io.kse.slurm.SlurmClient;
import io.kse.slurm.SlurmException;
import io.kse.slurm.SlurmJob;
import io.kse.slurm.SlurmNotFoundException;
import io.kse.slurm.cache.SlurmView;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The placeholders we cancel: each job's cancel sent once until it shows (again after {@link
 * #CANCEL_RETRY}), and replacements for a node Slurm cannot be told to avoid spaced out. Owns the
 * memory of cancels in flight, so a pass that runs before the cache shows one does not repeat it.
 */
final class SlurmCancels {
  private static final Logger LOG = LoggerFactory.getLogger(SlurmCancels.class);

  /** A cancel that did not show in the cache within this is sent again. */
  static final Duration CANCEL_RETRY = Duration.ofSeconds(10);

  private final SlurmClient slurm;
  private final SlurmView cache;
  private final PodActions actions;
  private final Clock clock;
  private final StepWorkers workers;
  private final WakeMemo woken;
  private final Map<Long, Instant> cancelling = new ConcurrentHashMap<>();

  SlurmCancels(
      SlurmClient slurm,
      SlurmView cache,
      PodActions actions,
      Clock clock,
      StepWorkers workers,
      WakeMemo woken) {
    this.slurm = slurm;
    this.cache = cache;
    this.actions = actions;
    this.clock = clock;
    this.workers = workers;
    this.woken = woken;
  }

  /** Forgets a cancel that could not be sent: the next pass may send it. */
  void forget(long jobId) {
    cancelling.remove(jobId);
  }

  /** Cancels a placeholder allocated a node its pod cannot go to, telling its pods why. */
  void replace(Placement placement, Step.Replace r) {
    if (placement.members().isEmpty() || spacedOut(placement, r) || !mayCancel(r.jobId())) {
      return;
    }
    PodRef ref = placement.members().get(0).ref();
    String why =
        r.reason() == EventReason.SHAPE_CHANGED
            ? r.why() + "; cancelling it, a placeholder of the placement's new shape follows"
            : "Slurm job "
                + r.jobId()
                + " was allocated a node the pod cannot go to now ("
                + r.why()
                + "); cancelling it, a new placeholder follows";
    LOG.info(
        "placeholder_replaced pod={} uid={} slurmJob={} reason=\"{}\"",
        ref,
        ref.uid(),
        r.jobId(),
        r.why());
    for (Placement.Slot m : placement.members()) {
      actions.event(m.ref(), r.reason(), why);
      woken.forget(m.ref().uid());
    }
    workers.execute(ref, () -> cancelNow(ref, r.jobId(), r.why()), () -> forget(r.jobId()));
  }

  /** Replacements for an unusable node, where Slurm cannot be told to avoid it: key → spacing. */
  private final Map<String, Spacing> replacements = new ConcurrentHashMap<>();

  private record Spacing(Instant next, Duration delay, long heldJob) {}

  static final Duration FIRST_RESPACING = Duration.ofSeconds(2);
  static final Duration MAX_RESPACING = Duration.ofMinutes(1);

  /**
   * slurmrestd 22.05 cannot exclude a node from a job, so Slurm may allocate the unusable node to
   * the replacement again, and again: replacements of one placement are spaced 2 s, 4 s … 1 min
   * apart instead of cancelling and submitting in a loop, and its pods are told why. True while
   * this replacement must wait. (v0.0.41+ exclude the node: Submitter.)
   */
  private boolean spacedOut(Placement placement, Step.Replace r) {
    if (r.reason() == EventReason.SHAPE_CHANGED || slurm.apiVersion().supportsExcludedNodes()) {
      return false;
    }
    Instant now = clock.instant();
    Spacing s = replacements.get(placement.key());
    if (s != null && now.isBefore(s.next())) {
      if (s.heldJob() != r.jobId()) {
        replacements.put(placement.key(), new Spacing(s.next(), s.delay(), r.jobId()));
        String why =
            "Slurm job "
                + r.jobId()
                + " was allocated a node the pod cannot go to now ("
                + r.why()
                + ") again: slurmrestd 22.05 cannot exclude a node from a job, so the next"
                + " replacement waits until "
                + s.next()
                + "; drain the node in Slurm (KSE_DRAIN_VIA does so for cordons) to keep Slurm"
                + " off it";
        for (Placement.Slot m : placement.members()) {
          actions.event(m.ref(), r.reason(), why);
        }
      }
      return true;
    }
    boolean fresh = s == null || now.isAfter(s.next().plus(MAX_RESPACING.multipliedBy(10)));
    Duration delay =
        fresh
            ? FIRST_RESPACING
            : s.delay().multipliedBy(2).compareTo(MAX_RESPACING) > 0
                ? MAX_RESPACING
                : s.delay().multipliedBy(2);
    replacements.put(placement.key(), new Spacing(now.plus(delay), delay, r.jobId()));
    if (replacements.size() > 10_000) { // placements long gone never say goodbye here
      replacements
          .entrySet()
          .removeIf(e -> now.isAfter(e.getValue().next().plus(MAX_RESPACING.multipliedBy(10))));
    }
    return false;
  }

  /** Cancels a job of the placement, unless a cancel of it was sent recently. */
  void cancel(Placement placement, long jobId, String why) {
    if (!mayCancel(jobId)) {
      return;
    }
    PodRef ref =
        placement.members().isEmpty()
            ? cache
                .job(jobId)
                .flatMap(SlurmJob::placeholder)
                .map(PodRef::of)
                .orElse(new PodRef("-", placement.name(), placement.key()))
            : placement.members().get(0).ref();
    workers.execute(ref, () -> cancelNow(ref, jobId, why), () -> forget(jobId));
  }

  /** True when no cancel of this job was sent recently (then records this one). */
  boolean mayCancel(long jobId) {
    Instant now = clock.instant();
    boolean[] mine = {false};
    cancelling.compute(
        jobId,
        (k, at) -> {
          if (at == null || !now.isBefore(at.plus(CANCEL_RETRY))) {
            mine[0] = true;
            return now;
          }
          return at;
        });
    if (cancelling.size() > 10_000) { // ended jobs never say goodbye here
      cancelling.entrySet().removeIf(en -> now.isAfter(en.getValue().plus(CANCEL_RETRY)));
    }
    return mine[0];
  }

  /** Cancels now, on the caller's thread (a worker's); a failure lets the next pass try again. */
  void cancelNow(PodRef ref, long jobId, String why) {
    try {
      slurm.cancel(jobId);
      LOG.info(
          "placeholder_cancelled pod={} uid={} slurmJob={} reason=\"{}\"",
          ref,
          ref.uid(),
          jobId,
          why);
    } catch (SlurmNotFoundException e) {
      LOG.info("placeholder_already_gone pod={} uid={} slurmJob={}", ref, ref.uid(), jobId);
    } catch (SlurmException e) {
      cancelling.remove(jobId); // the next pass tries again
      LOG.warn(
          "placeholder_cancel_failed pod={} uid={} slurmJob={} error={}",
          ref,
          ref.uid(),
          jobId,
          e.getMessage());
    }
  }
}
