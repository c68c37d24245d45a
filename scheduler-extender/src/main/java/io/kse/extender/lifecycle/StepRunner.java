package io.kse.extender.lifecycle;

import io.fabric8.kubernetes.api.model.Pod;
import io.kse.extender.k8s.EventReason;
import io.kse.extender.k8s.PodActions;
import io.kse.extender.k8s.PodRef;
import io.kse.extender.k8s.PodSource;
import io.kse.extender.lifecycle.PlacementFacts.PodStanding;
import io.kse.extender.metrics.ExtenderMetrics;
import io.kse.slurm.SlurmJob;
import io.kse.slurm.SubmissionOrder;
import io.kse.slurm.cache.SlurmView;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Carries out the steps the rules decided for one placement: Slurm and API calls on the workers
 * ({@link StepWorkers}), never on the pass's thread; cancels through {@link SlurmCancels}. It owns
 * the memory that keeps a step from being repeated while its effect is not visible yet (what each
 * pod was told, which members were woken) and forgets it as soon as no step is about it any more.
 */
final class StepRunner {
  private static final Logger LOG = LoggerFactory.getLogger(StepRunner.class);

  private final PlaceholderRegistry registry;
  private final SlurmView cache;
  private final PodSource pods;
  private final PodGroupSource podGroups;
  private final PodActions actions;
  private final Clock clock;
  private final ExtenderMetrics metrics;
  private final StepWorkers workers;
  private final Submitter submitter;
  private final SlurmCancels cancels;
  private final Evictions evictions;
  private final WakeMemo woken;
  private final WakeWrites wakeWrites;

  /**
   * How long a placeholder pends before its pods are told why they wait. Pending a moment is how
   * every placeholder starts (slurmctld schedules in passes, and a burst queues): saying so at once
   * cost each pod of a burst a condition patch, an Event and, on its wake-up, the condition's turn,
   * and the API server's CPU is what a burst waits for. The periodic pass says it once this has
   * passed.
   */
  private final Duration pendingQuiet;

  private final Consumer<PodRef> enqueue;
  private final SubmissionOrder order;
  private final io.kse.slurm.SlurmClient slurm;

  /** Holds and releases asked of Slurm and not shown by the cache yet (job:release → when). */
  private final Map<String, Instant> queueing = new ConcurrentHashMap<>();

  private final Map<String, WhyWaiting> waitingSaid = new ConcurrentHashMap<>();
  private final Map<String, Long> podGroupsMarked = new ConcurrentHashMap<>();

  /**
   * Pods Terminating long past their deadline whose placeholder is kept for them (uid → job): the
   * gauge {@code kse_placeholders_held_for_terminating_pods}, and one Event each.
   */
  private final Map<String, Long> heldForTerminating = new ConcurrentHashMap<>();

  /**
   * @param enqueue asks for a pass of the pod's placement (after a submission answered)
   */
  StepRunner(
      PlacementReconciler.Views v,
      PlacementReconciler.Calls c,
      PlacementReconciler.Settings s,
      Submitter submitter,
      WakeMemo woken,
      Consumer<PodRef> enqueue,
      SubmissionOrder order) {
    this.order = order;
    this.slurm = c.slurm();
    this.registry = v.registry();
    this.cache = v.cache();
    this.pods = v.pods();
    this.podGroups = v.podGroups();
    this.actions = c.actions();
    this.clock = c.clock();
    this.metrics = c.metrics();
    this.workers = new StepWorkers(c.workers());
    this.submitter = submitter;
    this.cancels = new SlurmCancels(c.slurm(), v.cache(), actions, clock, workers, woken);
    this.evictions = new Evictions(actions, metrics, clock, s.pdbOverride());
    this.woken = woken;
    this.wakeWrites = new WakeWrites(v.nodeNames()::kubernetesNodes, s.nominateFromNodes());
    this.pendingQuiet = s.pendingQuiet();
    this.enqueue = enqueue;
    metrics.heldForTerminating(heldForTerminating::size);
  }

  /**
   * Tells every member still waiting for a node why, and does nothing else: for a pass that may not
   * act on Slurm (the writer catching up after a takeover) but whose pods should still hear why.
   */
  void tellWaiting(Map<String, Optional<Pod>> pods, WhyWaiting why) {
    for (Optional<Pod> pod : pods.values()) {
      pod.filter(p -> p.getSpec().getNodeName() == null)
          .filter(p -> p.getMetadata().getDeletionTimestamp() == null)
          .map(PodRef::of)
          .ifPresent(ref -> waiting(ref, new Step.Waiting(ref, why.reason(), why.message())));
    }
  }

  /** Runs this pass's steps for the placement; what no step is about any more is forgotten. */
  void run(
      Placement placement,
      Map<String, Optional<Pod>> pods,
      PlacementFacts facts,
      List<Step> steps) {
    // members told they wait whose condition a wake-up must turn, though the informer may not
    // show it yet
    Set<String> told = new HashSet<>();
    for (Placement.Slot slot : placement.members()) { // what no step of this pass is about, is over
      PodRef m = slot.ref();
      if (steps.stream().noneMatch(st -> st instanceof Step.Waiting w && w.member().equals(m))
          && waitingSaid.remove(m.uid()) != null) {
        told.add(m.uid());
      }
      if (steps.stream().noneMatch(st -> st instanceof Step.Evict e && e.member().equals(m))) {
        evictions.forget(m.uid());
      }
      if (steps.stream()
          .noneMatch(st -> st instanceof Step.HeldForTerminating h && h.member().equals(m))) {
        heldForTerminating.remove(m.uid());
      }
    }
    podGroupPlaced(placement, facts);
    for (Step step : steps) {
      if (step instanceof Step.Forget) {
        registry.remove(placement.key());
        podGroupsMarked.remove(placement.key());
        placement.members().forEach(m -> woken.forget(m.ref().uid()));
      } else if (step instanceof Step.Submit s) {
        submit(placement, pods, facts, s.why());
      } else if (step instanceof Step.Waiting w) {
        if (!brieflyPending(w, facts)) {
          waiting(w.member(), w);
        }
      } else if (step instanceof Step.Wake w) {
        wake(w.member(), pods.get(w.member().uid()).orElseThrow(), w, told);
      } else if (step instanceof Step.Cancel c) {
        cancels.cancel(placement, c.jobId(), c.why());
      } else if (step instanceof Step.Replace r) {
        cancels.replace(placement, r);
      } else if (step instanceof Step.Evict e) {
        evict(e.member(), e);
      } else if (step instanceof Step.HeldForTerminating h) {
        heldForTerminating(h);
      } else if (step instanceof Step.Queue q) {
        queue(placement, q);
      }
    }
  }

  /** A Workload API gang whose every member is bound: its PodGroup says so, once. */
  private void podGroupPlaced(Placement placement, PlacementFacts facts) {
    Optional<Placement.Group> g = placement.group();
    if (g.isEmpty() || GroupKind.of(g.get().id()).orElse(null) != GroupKind.POD_GROUP) {
      return;
    }
    String name = GroupKind.POD_GROUP.nameIn(g.get().id());
    String ns = g.get().namespace();
    long bound =
        facts.members().stream()
            .filter(m -> m.pod() == PodStanding.BOUND)
            .map(PlacementFacts.Member::index)
            .distinct()
            .count();
    if (bound < placement.size()
        || podGroups.podGroup(ns, name).map(GroupMembership.PodGroupSpec::scheduled).orElse(true)) {
      return;
    }
    Long job = facts.job().map(SlurmJob::id).orElse(0L);
    if (job.equals(podGroupsMarked.put(placement.key(), job))) {
      return; // told already; the informer shows it soon
    }
    workers.execute(
        placement.members().get(0).ref(),
        () ->
            podGroups.markScheduled(
                ns, name, "all " + placement.size() + " members bound by Slurm job " + job),
        () -> podGroupsMarked.remove(placement.key()));
  }

  private void submit(
      Placement placement, Map<String, Optional<Pod>> pods, PlacementFacts facts, String why) {
    Instant now = clock.instant();
    boolean mine =
        registry.claim(
            placement.key(),
            new PlaceholderState.Submitting(now),
            old ->
                !(old instanceof PlaceholderState.Submitting)
                    && !(old instanceof PlaceholderState.Rejected));
    if (!mine) {
      return;
    }
    List<Pod> members = placement.needing(pods);
    placement.members().forEach(m -> woken.forget(m.ref().uid()));
    facts
        .job()
        .ifPresent(
            j -> {
              LOG.info(
                  "placeholder_lost pod={} key={} slurmJob={} action=resubmit reason=\"{}\"",
                  placement.name(),
                  placement.key(),
                  j.id(),
                  why);
              for (Pod m : members) {
                actions.event(
                    PodRef.of(m), EventReason.JOB_ENDED, why + "; submitting a new placeholder");
              }
            });
    PodRef lead = PodRef.of(members.get(0));
    workers.execute(
        lead,
        () -> {
          long id = submitter.submit(placement, members);
          if (id != 0 && members.stream().allMatch(m -> this.pods.pod(PodRef.of(m)).isEmpty())) {
            cancels.cancelNow(lead, id, "pods deleted while their placeholder was being submitted");
          }
          enqueue.accept(lead);
        },
        () -> registry.remove(placement.key()));
  }

  /**
   * Holds or releases a pending placeholder (issue 60); asked once until the cache shows it or 5 s
   * pass, so that passes in between do not ask again.
   */
  private void queue(Placement placement, Step.Queue q) {
    Instant now = clock.instant();
    queueing.values().removeIf(t -> t.isBefore(now.minusSeconds(5)));
    String key = q.jobId() + (q.release() ? ":release" : ":hold");
    if (queueing.putIfAbsent(key, now) != null) {
      return;
    }
    PodRef lead = placement.members().get(0).ref();
    workers.execute(
        lead,
        () -> {
          try {
            slurm.update(
                q.jobId(),
                q.release() ? order.release(q.jobId()) : io.kse.slurm.JobUpdate.holding());
            LOG.info(
                "placeholder_{} pod={} uid={} slurmJob={} leader={}",
                q.release() ? "released" : "held",
                placement.name(),
                lead.uid(),
                q.jobId(),
                q.release() ? "-" : Long.toString(q.leader()));
          } catch (io.kse.slurm.SlurmException e) {
            queueing.remove(key);
            LOG.warn(
                "placeholder_queue_failed pod={} uid={} slurmJob={} action={} error={}",
                placement.name(),
                lead.uid(),
                q.jobId(),
                q.release() ? "release" : "hold",
                e.getMessage());
          }
        },
        () -> queueing.remove(key));
  }

  private void heldForTerminating(Step.HeldForTerminating h) {
    PodRef ref = h.member();
    if (Long.valueOf(h.jobId()).equals(heldForTerminating.put(ref.uid(), h.jobId()))) {
      return;
    }
    String message =
        "the pod is still Terminating on "
            + h.boundNode()
            + " more than "
            + PlacementObserver.STUCK_TERMINATING.toSeconds()
            + " s past its deletion deadline; Slurm job "
            + h.jobId()
            + " keeps holding the node until the kubelet confirms its containers stopped (or the"
            + " pod is force-deleted)";
    LOG.warn(
        "placeholder_held_for_terminating pod={} uid={} slurmJob={} node={}",
        ref,
        ref.uid(),
        h.jobId(),
        h.boundNode());
    workers.execute(
        ref,
        () -> actions.event(ref, EventReason.HELD_FOR_TERMINATING, message),
        () -> heldForTerminating.remove(ref.uid()));
  }

  /**
   * A placeholder pending for less than the quiet period, or not yet seen pending past it: the pod
   * is not told it waits. In a burst our reads of Slurm lag its starts by seconds, and a pod must
   * not be told its job waits in the queue when Slurm has in fact started it — only a state Slurm
   * confirmed after the quiet period (and published in the snapshot) says so.
   */
  private boolean brieflyPending(Step.Waiting w, PlacementFacts facts) {
    if (w.reason() != WaitReason.SLURM_PENDING || facts.job().isEmpty()) {
      return false;
    }
    SlurmJob j = facts.job().get();
    Instant quietEnds = j.submitTime().plus(pendingQuiet);
    Instant confirmed = cache.confirmedAt(j.id());
    return clock.instant().isBefore(quietEnds)
        || confirmed.isBefore(quietEnds)
        || confirmed.isAfter(cache.snapshot().asOf());
  }

  /** What this pod was last told about why it waits, while it still waits. */
  Optional<WhyWaiting> toldWaiting(String uid) {
    return Optional.ofNullable(waitingSaid.get(uid));
  }

  private void waiting(PodRef ref, Step.Waiting w) {
    WhyWaiting said = new WhyWaiting(w.reason(), w.message());
    if (said.equals(waitingSaid.put(ref.uid(), said))) {
      return;
    }
    workers.execute(
        ref,
        () -> {
          actions.condition(ref, false, w.reason().reason(), w.message());
          actions.event(ref, EventReason.WAITING, w.message());
        },
        () -> waitingSaid.remove(ref.uid()));
  }

  private void wake(PodRef ref, Pod pod, Step.Wake w, Set<String> told) {
    woken.woke(ref.uid(), w.jobId(), w.node()); // the rules wake once per job; a failure undoes it
    LOG.info(
        "placeholder_allocated pod={} uid={} slurmJob={} node={}",
        ref,
        ref.uid(),
        w.jobId(),
        w.node());
    age(pod).ifPresent(metrics::allocated);
    PodActions.WakeUp how = wakeWrites.of(pod, told.contains(ref.uid()));
    long decided = System.nanoTime();
    workers.execute(
        ref,
        () -> {
          long started = System.nanoTime();
          // said first (held, then said with the binding): once the pod is woken it may be bound
          // before this worker goes on, and an allocation held after the binding's Event is said
          // on its own (a retried wake says it once: QuietEvents keeps one of each)
          actions.event(
              ref, EventReason.ALLOCATED, "Slurm job " + w.jobId() + " allocated node " + w.node());
          if (!actions.wake(ref, w.node(), w.jobId(), how)) {
            woken.forget(ref.uid()); // the next pass tries again
          }
          metrics.wakeUp(
              Duration.ofNanos(started - decided), Duration.ofNanos(System.nanoTime() - started));
        },
        () -> woken.forget(ref.uid()));
  }

  private void evict(PodRef ref, Step.Evict e) {
    if (!evictions.claim(ref.uid())) {
      return;
    }
    LOG.info("placeholder_lost pod={} uid={} action=evict reason=\"{}\"", ref, ref.uid(), e.why());
    workers.execute(
        ref,
        () -> {
          if (e.jobToCancel() != 0 && cancels.mayCancel(e.jobToCancel())) {
            cancels.cancelNow(ref, e.jobToCancel(), "its pod is being evicted: " + e.why());
          }
          evictions.run(ref, e.why(), e.reason());
        },
        () -> evictions.forget(ref.uid()));
  }

  /** Called after a successful bind: records pod creation → bound. */
  void bound(PodRef ref) {
    pods.pod(ref).flatMap(this::age).ifPresent(metrics::bound);
  }

  private Optional<Duration> age(Pod pod) {
    return PlacementObserver.created(pod).map(c -> Duration.between(c, clock.instant()));
  }
}
