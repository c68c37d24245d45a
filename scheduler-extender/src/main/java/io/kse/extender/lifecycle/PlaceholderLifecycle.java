package io.kse.extender.lifecycle;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.Pod;
import io.kse.extender.k8s.NodeNames;
import io.kse.extender.k8s.PodActions;
import io.kse.extender.k8s.PodSource;
import io.kse.extender.k8s.WellKnown;
import io.kse.extender.wire.PodRef;
import io.kse.policy.Decision;
import io.kse.policy.PlacementPolicy;
import io.kse.policy.PodFacts;
import io.kse.policy.PodManifest;
import io.kse.policy.PreemptionLedger;
import io.kse.slurm.JobSubmission;
import io.kse.slurm.PlaceholderTag;
import io.kse.slurm.SlurmClient;
import io.kse.slurm.SlurmException;
import io.kse.slurm.SlurmJob;
import io.kse.slurm.SlurmNotFoundException;
import io.kse.slurm.SlurmRejectedException;
import io.kse.slurm.cache.JobChange;
import io.kse.slurm.cache.SlurmStateCache;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps each pod's placeholder job alive exactly as long as the pod: submits it when the pod
 * appears (idempotent by pod UID), wakes the pod when Slurm allocates, cancels the job when the pod
 * goes, and evicts a bound pod whose job ended. Slurm and API calls run on {@code workers}, never
 * on the caller's thread.
 */
public final class PlaceholderLifecycle {
  private static final Logger LOG = LoggerFactory.getLogger(PlaceholderLifecycle.class);
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Duration MAX_BACKOFF = Duration.ofMinutes(1);

  private final SlurmClient slurm;
  private final SlurmStateCache cache;
  private final Supplier<PlacementPolicy> policy;
  private final PreemptionLedger ledger;
  private final PlaceholderRegistry registry;
  private final PodSource pods;
  private final PodActions actions;
  private final NodeNames nodeNames;
  private final Clock clock;
  private final ExecutorService workers;
  private final String workDir;
  private final JobSubmission.Shape shape;
  private final io.kse.extender.metrics.ExtenderMetrics metrics;
  private final PreemptionTracker preemptions = new PreemptionTracker(this::preempted);
  private volatile java.util.function.BooleanSupplier writer = () -> true;

  public PlaceholderLifecycle(
      SlurmClient slurm,
      SlurmStateCache cache,
      Supplier<PlacementPolicy> policy,
      PreemptionLedger ledger,
      PlaceholderRegistry registry,
      PodSource pods,
      PodActions actions,
      NodeNames nodeNames,
      Clock clock,
      ExecutorService workers,
      String workDir,
      JobSubmission.Shape shape,
      io.kse.extender.metrics.ExtenderMetrics metrics) {
    this.slurm = slurm;
    this.cache = cache;
    this.policy = policy;
    this.ledger = ledger;
    this.registry = registry;
    this.pods = pods;
    this.actions = actions;
    this.nodeNames = nodeNames;
    this.clock = clock;
    this.workers = workers;
    this.workDir = workDir;
    this.shape = shape;
    this.metrics = metrics;
    metrics.placeholders(registry::count, PlaceholderRegistry.STATES);
  }

  /**
   * Only the replica holding the writer lease acts on Slurm and pods; the others keep their caches
   * warm and answer kube-scheduler. Single-replica deployments are always the writer.
   */
  public void writerGate(java.util.function.BooleanSupplier isWriter) {
    this.writer = isWriter;
  }

  /** The new writer re-checks everything: orphans, and pods that may still need a placeholder. */
  public void takeOver() {
    int orphans = cancelOrphans();
    int pending = 0;
    for (Pod p : pods.pods()) {
      if (!isTerminal(p)
          && (p.getSpec().getNodeName() == null || p.getSpec().getNodeName().isEmpty())) {
        requestPlaceholder(ref(p));
        pending++;
      }
    }
    LOG.info("writer_takeover orphansCancelled={} pendingPodsChecked={}", orphans, pending);
  }

  /** Non-blocking: makes sure a placeholder exists or is being submitted for the pod. */
  public void requestPlaceholder(PodRef ref) {
    if (!writer.getAsBoolean()) {
      return;
    }
    Instant now = clock.instant();
    boolean mine =
        registry.claim(
            ref.uid(),
            new PlaceholderState.Submitting(now),
            old ->
                old instanceof PlaceholderState.SubmitFailed f && !now.isBefore(f.retryAt())
                    || old instanceof PlaceholderState.Submitted s && endedOrGone(s.jobId()));
    if (!mine) {
      return;
    }
    try {
      workers.execute(() -> submit(ref));
    } catch (RejectedExecutionException e) {
      registry.remove(ref.uid()); // shutting down; the next filter call asks again
    }
  }

  private boolean endedOrGone(long jobId) {
    return cache.job(jobId).map(j -> j.state().isFinal()).orElse(false);
  }

  /** The pod appeared or changed in the informer. */
  public void onPod(Pod pod) {
    PodRef ref = ref(pod);
    if (isTerminal(pod)) {
      release(ref, "pod " + pod.getStatus().getPhase());
    } else if (pod.getSpec().getNodeName() == null || pod.getSpec().getNodeName().isEmpty()) {
      if (pod.getMetadata().getDeletionTimestamp() == null) {
        requestPlaceholder(ref);
      }
    }
  }

  /** The pod was deleted. */
  public void onPodDeleted(Pod pod) {
    release(ref(pod), "pod deleted");
  }

  /** Cancels the pod's placeholder (the pod is gone, terminal, or was replaced). */
  public void release(PodRef ref, String why) {
    // the submit answer may be newer than the cache (polled): the registry knows that job id
    Optional<Long> submitted =
        registry
            .get(ref.uid())
            .filter(PlaceholderState.Submitted.class::isInstance)
            .map(st -> ((PlaceholderState.Submitted) st).jobId());
    registry.remove(ref.uid());
    if (!writer.getAsBoolean()) {
      return;
    }
    cache
        .jobForPod(ref.uid())
        .filter(j -> !j.state().isFinal())
        .map(SlurmJob::id)
        .or(() -> submitted)
        .ifPresent(id -> workers.execute(() -> cancelFor(ref, id, why)));
  }

  private void cancelFor(PodRef ref, long jobId, String why) {
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
      LOG.warn(
          "placeholder_cancel_failed pod={} uid={} slurmJob={} error={}",
          ref,
          ref.uid(),
          jobId,
          e.getMessage());
    }
  }

  private boolean podStillExists(PodRef ref) {
    return pods.pod(ref.namespace(), ref.name())
        .filter(p -> ref.uid().equals(p.getMetadata().getUid()))
        .isPresent();
  }

  private void submit(PodRef ref) {
    Optional<Pod> pod = pods.pod(ref.namespace(), ref.name());
    if (pod.isEmpty() || !ref.uid().equals(pod.get().getMetadata().getUid())) {
      registry.remove(ref.uid()); // not (yet) in the informer: its add event will ask again
      return;
    }
    Optional<SlurmJob> live = cache.jobForPod(ref.uid()).filter(j -> !j.state().isFinal());
    if (live.isPresent()) { // adopted after a restart, or submitted by an earlier call
      SlurmJob job = live.get();
      registry.put(ref.uid(), new PlaceholderState.Submitted(job.id(), "?", clock.instant()));
      if (job.isAllocated()) {
        // allocated while no writer was watching: nobody woke the pod, kube-scheduler may have
        // parked it, so wake it now
        String node = nodeNames.kubernetes(job.nodes().get(0));
        LOG.info(
            "placeholder_adopted pod={} uid={} slurmJob={} nodes={}",
            ref,
            ref.uid(),
            job.id(),
            job.nodes());
        actions.wake(ref, node, job.id(), gated(pod.get()));
      }
      return;
    }
    PodFacts facts;
    try {
      facts = PodManifest.facts(JSON.valueToTree(pod.get()));
    } catch (IllegalArgumentException e) {
      reject(ref, "unreadable pod: " + e.getMessage());
      return;
    }
    Decision d = policy.get().decide(facts, ledger, clock.instant());
    if (d instanceof Decision.Reject r) {
      reject(ref, r.reason());
      return;
    }
    Decision.Place place = (Decision.Place) d;
    try {
      JobSubmission s = Placeholders.toSubmission(ref, place.job(), workDir, shape);
      long id = slurm.submit(s);
      registry.put(ref.uid(), new PlaceholderState.Submitted(id, place.tier(), clock.instant()));
      if (!podStillExists(ref)) { // deleted while the submit was in flight: nobody else will
        cancelFor(ref, id, "pod deleted while its placeholder was being submitted");
        registry.remove(ref.uid());
        return;
      }
      LOG.info(
          "placeholder_submitted pod={} uid={} slurmJob={} tier={} partition={} qos={} gres={}",
          ref,
          ref.uid(),
          id,
          place.tier(),
          place.job().partition().orElse("-"),
          place.job().qos().orElse("-"),
          place.job().gresPerNode().orElse("-"));
      actions.event(
          ref,
          false,
          WellKnown.SUBMITTED,
          "placeholder submitted as Slurm job "
              + id
              + " (tier "
              + place.tier()
              + place.job().partition().map(p -> ", partition " + p).orElse("")
              + place.job().qos().map(q -> ", qos " + q).orElse("")
              + ")");
    } catch (IllegalArgumentException | SlurmRejectedException e) {
      reject(ref, e.getMessage());
    } catch (SlurmException e) {
      int attempts =
          1
              + registry
                  .get(ref.uid())
                  .filter(PlaceholderState.SubmitFailed.class::isInstance)
                  .map(x -> ((PlaceholderState.SubmitFailed) x).attempts())
                  .orElse(0);
      Duration backoff =
          Duration.ofSeconds(Math.min(MAX_BACKOFF.getSeconds(), 1L << Math.min(6, attempts)));
      registry.put(
          ref.uid(),
          new PlaceholderState.SubmitFailed(
              "Slurm unavailable", clock.instant().plus(backoff), attempts));
      LOG.warn(
          "placeholder_submit_failed pod={} uid={} attempt={} retryInMs={} error={}",
          ref,
          ref.uid(),
          attempts,
          backoff.toMillis(),
          e.getMessage());
      actions.event(
          ref,
          true,
          WellKnown.SUBMIT_FAILED,
          "could not submit the Slurm placeholder (attempt "
              + attempts
              + ", retrying): "
              + e.getMessage());
    }
  }

  private void reject(PodRef ref, String reason) {
    registry.put(ref.uid(), new PlaceholderState.Rejected(reason));
    LOG.info("placeholder_rejected pod={} uid={} reason=\"{}\"", ref, ref.uid(), reason);
    actions.event(ref, true, WellKnown.REJECTED, reason);
    actions.ungate(ref); // so kube-scheduler tries it and shows the filter's reason
  }

  /**
   * Retries the submissions whose backoff has passed (periodic): after a Slurm outage nothing else
   * may ask again soon, since kube-scheduler keeps pods it could not place for up to minutes.
   */
  public int retryDueSubmissions() {
    if (!writer.getAsBoolean() || registry.count("SubmitFailed") == 0) {
      return 0; // the common case: no walk over every pod
    }
    Instant now = clock.instant();
    int n = 0;
    for (Pod p : pods.pods()) {
      boolean due =
          registry
              .get(p.getMetadata().getUid())
              .filter(PlaceholderState.SubmitFailed.class::isInstance)
              .map(st -> !now.isBefore(((PlaceholderState.SubmitFailed) st).retryAt()))
              .orElse(false);
      if (due && p.getMetadata().getDeletionTimestamp() == null) {
        requestPlaceholder(ref(p));
        n++;
      }
    }
    return n;
  }

  /**
   * After a restart: cancels live placeholder jobs whose pod no longer exists. Pods that do exist
   * are adopted by {@link #requestPlaceholder} finding their job in the cache.
   */
  public int cancelOrphans() {
    if (!writer.getAsBoolean()) {
      return 0;
    }
    java.util.Set<String> uids = new java.util.HashSet<>();
    pods.pods().forEach(p -> uids.add(p.getMetadata().getUid()));
    int n = 0;
    for (SlurmJob j : cache.snapshot().jobs().values()) {
      Optional<PlaceholderTag> tag = j.placeholder();
      if (tag.isPresent() && !j.state().isFinal() && !uids.contains(tag.get().uid())) {
        PodRef ref = new PodRef(tag.get().namespace(), tag.get().name(), tag.get().uid());
        workers.execute(() -> cancelOrphan(ref, j.id()));
        n++;
      }
    }
    return n;
  }

  /** A Slurm job changed (cache listener, poller thread): react for placeholders only. */
  public void onJobChange(JobChange change) {
    if (!writer.getAsBoolean()) {
      return;
    }
    preemptions.observe(change);
    SlurmJob job = change.after().or(change::before).orElseThrow();
    Optional<PlaceholderTag> tag = job.placeholder();
    if (tag.isEmpty()) {
      return;
    }
    PodRef ref = new PodRef(tag.get().namespace(), tag.get().name(), tag.get().uid());
    Optional<Pod> pod =
        pods.pod(ref.namespace(), ref.name())
            .filter(p -> ref.uid().equals(p.getMetadata().getUid()));
    if (change.started()) {
      String node = nodeNames.kubernetes(job.nodes().get(0));
      if (pod.isEmpty()) {
        workers.execute(() -> cancelOrphan(ref, job.id()));
        return;
      }
      LOG.info(
          "placeholder_allocated pod={} uid={} slurmJob={} nodes={}",
          ref,
          ref.uid(),
          job.id(),
          job.nodes());
      age(pod.get()).ifPresent(metrics::allocated);
      workers.execute(
          () -> {
            actions.wake(
                ref,
                node,
                job.id(),
                gated(pod.get())); // first: time-to-bind waits on it, not the Event
            actions.event(
                ref,
                false,
                WellKnown.ALLOCATED,
                "Slurm job " + job.id() + " allocated node " + node);
          });
    } else if (change
            .after()
            .map(
                j ->
                    j.state().isFinal()
                        || j.restartCount() > change.before().map(SlurmJob::restartCount).orElse(0))
            .orElse(false)
        && change.before().map(SlurmJob::isAllocated).orElse(false)) {
      // the placeholder lost its allocation: preempted, cancelled, timed out, node failed
      boolean bound =
          pod.map(p -> p.getSpec().getNodeName() != null && !p.getSpec().getNodeName().isEmpty())
              .orElse(false);
      String what = "Slurm job " + job.id() + " " + describeEnd(change.after().get());
      if (bound) {
        LOG.info(
            "placeholder_lost pod={} uid={} slurmJob={} action=evict reason=\"{}\"",
            ref,
            ref.uid(),
            job.id(),
            what);
        workers.execute(
            () -> {
              actions.event(ref, true, WellKnown.JOB_ENDED, what + "; evicting the pod");
              actions.evict(ref, what);
            });
      } else if (pod.isPresent()) {
        registry.remove(ref.uid());
        LOG.info(
            "placeholder_lost pod={} uid={} slurmJob={} action=resubmit reason=\"{}\"",
            ref,
            ref.uid(),
            job.id(),
            what);
        if (!change.after().get().state().isFinal()) {
          workers.execute(
              () -> cancelQuietly(job.id())); // a requeued placeholder must not come back later
        }
        requestPlaceholder(ref);
      }
    }
  }

  /** Slurm preempted {@code victim} to run {@code placeholder}: tell the pod, charge the budget. */
  private void preempted(SlurmJob placeholder, SlurmJob victim) {
    var p = policy.get().policy();
    String tier =
        p.tierOfSlurmJob(placeholder.partition(), placeholder.qos())
            .map(t -> t.name())
            .orElse("unknown");
    String victimTier =
        p.tierOfSlurmJob(victim.partition(), victim.qos()).map(t -> t.name()).orElse("unknown");
    long gpus = (long) victim.gpusPerNode() * victim.nodes().size();
    ledger.record(tier, gpus, victim.nodes().size(), clock.instant());
    metrics.preemption(tier, victimTier);
    PlaceholderTag tag = placeholder.placeholder().orElseThrow();
    PodRef ref = new PodRef(tag.namespace(), tag.name(), tag.uid());
    String what =
        "Slurm preempted job "
            + victim.id()
            + " ("
            + victim.name()
            + ", partition "
            + victim.partition()
            + (victim.qos().isEmpty() ? "" : ", qos " + victim.qos())
            + ", tier "
            + victimTier
            + ", "
            + gpus
            + " GPUs) on "
            + String.join(",", victim.nodes())
            + " for this pod's placeholder job "
            + placeholder.id();
    LOG.info(
        "slurm_preemption pod={} uid={} slurmJob={} tier={} victimJob={} victimTier={} gpus={} nodes={}",
        ref,
        ref.uid(),
        placeholder.id(),
        tier,
        victim.id(),
        victimTier,
        gpus,
        victim.nodes());
    workers.execute(() -> actions.event(ref, false, "PreemptedSlurmJob", what));
  }

  /** Called after a successful bind: records pod creation → bound. */
  public void bound(PodRef ref) {
    pods.pod(ref.namespace(), ref.name())
        .filter(p -> ref.uid().equals(p.getMetadata().getUid()))
        .flatMap(this::age)
        .ifPresent(metrics::bound);
  }

  private Optional<Duration> age(Pod pod) {
    try {
      Instant created = Instant.parse(pod.getMetadata().getCreationTimestamp());
      return Optional.of(Duration.between(created, clock.instant()));
    } catch (RuntimeException e) {
      return Optional.empty();
    }
  }

  private static String describeEnd(SlurmJob j) {
    if (!j.state().isFinal()) {
      return "was preempted and requeued (" + j.stateReason() + ")";
    }
    return "ended: " + j.state();
  }

  private void cancelOrphan(PodRef ref, long jobId) {
    LOG.info("placeholder_orphan pod={} uid={} slurmJob={} action=cancel", ref, ref.uid(), jobId);
    cancelQuietly(jobId);
  }

  private void cancelQuietly(long jobId) {
    try {
      slurm.cancel(jobId);
    } catch (SlurmException e) {
      LOG.warn("placeholder_cancel_failed slurmJob={} error={}", jobId, e.getMessage());
    }
  }

  /** Held by our scheduling gate (manifests/base/scheduling-gate.yaml). */
  static boolean gated(Pod p) {
    return p.getSpec().getSchedulingGates() != null
        && p.getSpec().getSchedulingGates().stream()
            .anyMatch(g -> WellKnown.SCHEDULING_GATE.equals(g.getName()));
  }

  static PodRef ref(Pod p) {
    return new PodRef(
        p.getMetadata().getNamespace(), p.getMetadata().getName(), p.getMetadata().getUid());
  }

  static boolean isTerminal(Pod p) {
    String phase = p.getStatus() == null ? null : p.getStatus().getPhase();
    return "Succeeded".equals(phase) || "Failed".equals(phase);
  }
}
