package io.kse.extender.k8s;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Events that say one thing once (each Event is an API write). A pod's "submitted" and "allocated"
 * Events are held: a pod bound meanwhile gets one {@code BoundToSlurmNode} Event that also says
 * what they would have said, and a pod told it waits (after the quiet period, once Slurm was read
 * past it) one {@code WaitingForSlurm} Event that also says them. A held Event is posted on its own
 * only after {@link #HELD_QUIETS} quiet periods, stamped with the time it happened: in a burst on
 * busy cores, pods are bound seconds after their placeholders start, and each Event posted on its
 * own was one more write per pod. Any other Event of the pod first posts what is held for it, so a
 * pod's Events never come out of order. Everything else passes through.
 */
public final class QuietEvents implements PodActions {
  static final Set<EventReason> HELD = EnumSet.of(EventReason.SUBMITTED, EventReason.ALLOCATED);

  /** How many quiet periods a held Event waits for the Event that says it too (30 s by default). */
  static final int HELD_QUIETS = 6;

  /** Events that also say what is held for the pod, instead of it being posted before them. */
  static final Set<EventReason> SAY_HELD = EnumSet.of(EventReason.BOUND, EventReason.WAITING);

  private record Held(PodRef pod, EventReason reason, String message, Instant at) {}

  private final PodActions delegate;
  private final Clock clock;
  private final Duration quiet;

  /** Held Events by pod UID, oldest first; a pod's entry leaves when its Events are posted. */
  private final Map<String, List<Held>> held = new LinkedHashMap<>();

  public QuietEvents(PodActions delegate, Clock clock, Duration quiet) {
    this.delegate = delegate;
    this.clock = clock;
    this.quiet = quiet;
  }

  @Override
  public void event(PodRef pod, EventReason reason, String message) {
    if (quiet.isZero()) {
      delegate.event(pod, reason, message);
      return;
    }
    if (HELD.contains(reason)) {
      synchronized (this) {
        List<Held> said = held.computeIfAbsent(pod.uid(), k -> new ArrayList<>());
        // the same step said again (a wake retried) is held once
        if (said.stream().noneMatch(h -> h.reason() == reason && h.message().equals(message))) {
          said.add(new Held(pod, reason, message, clock.instant()));
        }
      }
      return;
    }
    List<Held> before = take(pod.uid());
    if (SAY_HELD.contains(reason) && !before.isEmpty()) {
      StringBuilder said = new StringBuilder(message);
      for (Held h : before) {
        said.append("; ").append(h.message());
      }
      delegate.event(pod, reason, said.toString());
      return;
    }
    before.forEach(this::post);
    delegate.event(pod, reason, message);
  }

  /** Posts the held Events whose quiet period is over (housekeeping, every second). */
  public void flush() {
    Instant now = clock.instant();
    Duration heldFor = quiet.multipliedBy(HELD_QUIETS);
    List<Held> out = new ArrayList<>();
    synchronized (this) {
      for (var it = held.values().iterator(); it.hasNext(); ) {
        List<Held> pod = it.next();
        // a pod's Events in order, each when its own quiet period is over
        while (!pod.isEmpty() && !pod.get(0).at().plus(heldFor).isAfter(now)) {
          out.add(pod.remove(0));
        }
        if (pod.isEmpty()) {
          it.remove();
        }
      }
    }
    out.forEach(this::post);
  }

  /** Posts everything held, due or not (shutdown: a pod's steps are said, if late). */
  public void flushAll() {
    List<Held> out = new ArrayList<>();
    synchronized (this) {
      held.values().forEach(out::addAll);
      held.clear();
    }
    out.forEach(this::post);
  }

  /** Events held now (a gauge; bounded by the pods that wait less than the quiet period). */
  public synchronized int held() {
    return held.values().stream().mapToInt(List::size).sum();
  }

  private synchronized List<Held> take(String uid) {
    List<Held> h = held.remove(uid);
    return h == null ? List.of() : h;
  }

  private void post(Held h) {
    delegate.event(h.pod(), h.reason(), h.message(), h.at());
  }

  @Override
  public void event(PodRef pod, EventReason reason, String message, Instant at) {
    delegate.event(pod, reason, message, at);
  }

  @Override
  public boolean wake(PodRef pod, String node, long jobId, WakeUp how) {
    return delegate.wake(pod, node, jobId, how);
  }

  @Override
  public void ungate(PodRef pod) {
    delegate.ungate(pod);
  }

  @Override
  public EvictResult evict(PodRef pod, String reason) {
    return delegate.evict(pod, reason);
  }

  @Override
  public boolean delete(PodRef pod, String reason) {
    return delegate.delete(pod, reason);
  }

  @Override
  public void condition(PodRef pod, boolean allocated, String reason, String message) {
    delegate.condition(pod, allocated, reason, message);
  }
}
