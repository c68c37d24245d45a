package io.kse.extender.lifecycle;

import io.fabric8.kubernetes.api.model.Pod;
import io.kse.extender.dra.ClaimProblem;
import io.kse.extender.dra.GpuClaims;
import io.kse.extender.k8s.ClusterIdentity;
import io.kse.extender.k8s.KubeNodes;
import io.kse.extender.k8s.NodeNames;
import io.kse.extender.k8s.PodActions;
import io.kse.extender.k8s.PodRef;
import io.kse.extender.k8s.PodSource;
import io.kse.extender.metrics.ExtenderMetrics;
import io.kse.policy.Decision;
import io.kse.policy.PlacementPolicy;
import io.kse.policy.PreemptionLedger;
import io.kse.slurm.JobSubmission;
import io.kse.slurm.PlaceholderTag;
import io.kse.slurm.SlurmClient;
import io.kse.slurm.SlurmJob;
import io.kse.slurm.SubmissionOrder;
import io.kse.slurm.cache.JobChange;
import io.kse.slurm.cache.SlurmView;
import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Executor;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps every placement as it must be: a pod runs if and only if its Slurm job holds its node, and
 * a placeholder job lives exactly as long as its pods. Level-triggered: each pass gathers what is
 * true now ({@link PlacementObserver}), asks {@link PlacementRules} what must be done, and has
 * {@link StepRunner} do it; a pass runs ({@link PlacementQueue}) whenever a placement's pods or job
 * change, and for all of them periodically and when this replica becomes the writer. So a
 * transition that no poll saw, a restart or a fail-over converge the same way.
 */
public final class PlacementReconciler {
  private static final Logger LOG = LoggerFactory.getLogger(PlacementReconciler.class);

  private final PlacementQueue queue;
  private final PlacementObserver observer;
  private final PlacementRules rules;
  private final StepRunner runner;
  private final Submitter submitter;
  private final PreemptionAttribution attribution;
  private final PodFactsReader podFacts;
  private final Views views;

  /**
   * What the reconciler reads and whether it may act.
   *
   * @param mayAct whether this replica may act now: it holds the writer lease and both views are
   *     synced (others keep their caches warm and answer kube-scheduler, nothing more)
   */
  public record Views(
      SlurmView cache,
      PodSource pods,
      PodGroupSource podGroups,
      NodeNames nodeNames,
      Optional<KubeNodes> kubeNodes,
      PlaceholderRegistry registry,
      ClusterIdentity cluster,
      BooleanSupplier mayAct) {
    /** The same views, acting only while {@code also} holds too. */
    Views gated(BooleanSupplier also) {
      return new Views(
          cache,
          pods,
          podGroups,
          nodeNames,
          kubeNodes,
          registry,
          cluster,
          () -> mayAct.getAsBoolean() && also.getAsBoolean());
    }
  }

  /** What the reconciler calls, and where its work runs (passes one at a time). */
  public record Calls(
      SlurmClient slurm,
      io.kse.slurm.cache.SlurmRelisting relisting,
      PodActions actions,
      GpuClaims gpuClaims,
      Executor passes,
      Executor workers,
      ExtenderMetrics metrics,
      Clock clock) {}

  /**
   * How placeholders are made and kept.
   *
   * @param pdbOverride how long a PodDisruptionBudget may hold off evicting a pod whose job ended
   * @param groupIncompleteWait how long a group may lack members before its pods are told so
   * @param nominateFromNodes from how many Kubernetes nodes a woken pod is nominated too ({@link
   *     WakeWrites})
   * @param pendingQuiet how long a placeholder pends before its pods are told why they wait
   */
  public record Settings(
      Supplier<PlacementPolicy> policy,
      PreemptionLedger ledger,
      String workDir,
      JobSubmission.Shape shape,
      Duration pdbOverride,
      Duration groupIncompleteWait,
      int nominateFromNodes,
      Duration pendingQuiet) {}

  /** The reconciler and its parts, wired. */
  public static PlacementReconciler wire(Views given, Calls c, Settings s) {
    // a new writer acts only once it has read the jobs made since its cache last listed
    // slurmctld's table: its cache follows the jobs it made, not the previous writer's (a
    // placeholder it did not know of would be submitted twice)
    Takeover takeover = new Takeover(c.relisting());
    Views v = given.gated(takeover::caughtUp);
    WakeMemo woken = new WakeMemo();
    PodFactsReader podFacts = new PodFactsReader(c.gpuClaims());
    NodeStanding standing = new NodeStanding(v.cache(), v.nodeNames(), v.kubeNodes(), s.policy());
    // one of ours waits in Slurm's queue per partition, the others held behind it (issue 60)
    SubmissionOrder order =
        new SubmissionOrder(
            v.cache()::snapshot,
            j ->
                s.policy()
                    .get()
                    .policy()
                    .tierOfSlurmJob(j.partition(), j.qos())
                    .map(io.kse.policy.model.Tier::preempts)
                    .orElse(true),
            c.clock());
    PlacementObserver observer =
        new PlacementObserver(
            v, c.clock(), s.groupIncompleteWait(), standing, podFacts, woken, order);
    PlacementQueue queue =
        new PlacementQueue(v.pods(), v.podGroups(), c.passes(), observer::members);
    Submitter submitter = new Submitter(v, c, s, standing, podFacts, order);
    StepRunner runner = new StepRunner(v, c, s, submitter, woken, queue::enqueue, order);
    PreemptionAttribution attribution =
        new PreemptionAttribution(
            s.policy(),
            s.ledger(),
            c.actions(),
            c.metrics(),
            c.clock(),
            c.workers(),
            v.mayAct(),
            ref -> tierOf(ref, v.pods(), podFacts, s.policy()),
            v.cache()::ours);
    c.metrics().placeholders(v.registry()::count, PlaceholderRegistry.STATES, Class::getSimpleName);
    return new PlacementReconciler(
        queue,
        observer,
        new PlacementRules(v.nodeNames()::kubernetes),
        runner,
        submitter,
        attribution,
        podFacts,
        v,
        takeover,
        given.mayAct());
  }

  /** When this replica last became the writer, and whether it has listed Slurm's jobs since. */
  static final class Takeover {
    private final io.kse.slurm.cache.SlurmRelisting cache;
    private volatile long listingsBefore;

    Takeover(io.kse.slurm.cache.SlurmRelisting cache) {
      this.cache = cache;
    }

    void now() {
      listingsBefore = cache.listingsBegun();
    }

    /**
     * The jobs made since the cache's last listing read (or the whole table), then {@code then}.
     */
    void relist(Runnable then) {
      cache.afterNextListing(then);
      cache.catchUpSoon();
    }

    boolean caughtUp() {
      return cache.listedSince(listingsBefore);
    }
  }

  private final Takeover takeover;

  /** This replica holds the lease and its views are synced (whether or not it has caught up). */
  private final BooleanSupplier writer;

  PlacementReconciler(
      PlacementQueue queue,
      PlacementObserver observer,
      PlacementRules rules,
      StepRunner runner,
      Submitter submitter,
      PreemptionAttribution attribution,
      PodFactsReader podFacts,
      Views views,
      Takeover takeover,
      BooleanSupplier writer) {
    this.takeover = takeover;
    this.writer = writer;
    this.queue = queue;
    this.observer = observer;
    this.rules = rules;
    this.runner = runner;
    this.submitter = submitter;
    this.attribution = attribution;
    this.podFacts = podFacts;
    this.views = views;
    queue.passesRun(this::reconcile);
  }

  // ---- what triggers a pass ------------------------------------------------------------------

  /** Schedules a pass for the pod's placement (deduplicated while one is queued). */
  public void enqueue(PodRef ref) {
    queue.enqueue(ref);
  }

  /** The pod appeared or changed in the informer. */
  public void onPod(Pod pod) {
    queue.onPod(pod);
  }

  /** The pod was deleted. */
  public void onPodDeleted(Pod pod) {
    podFacts.forget(pod.getMetadata().getUid());
    queue.onPodDeleted(pod);
  }

  /** A PodGroup (Workload API) appeared, changed or went: its gang's size may have changed. */
  public void onPodGroup(String namespace, String name) {
    queue.onPodGroup(namespace, name);
  }

  /** A Slurm job changed (cache listener): its placement, and preemption attribution. */
  public void onJobChange(JobChange change) {
    // every replica follows every job, so a victim that was running before this one became the
    // writer is known when it loses its nodes; only the writer charges and tells
    Optional<SlurmJob> job = change.after().or(change::before);
    String cluster = views.cluster().get();
    if (job.flatMap(SlurmJob::placeholder).filter(t -> t.foreignTo(cluster)).isPresent()) {
      return; // another Kubernetes cluster's placeholder, on the Slurm we share
    }
    attribution.observe(change);
    // from Slurm's side alone, only what this cluster submitted (an older tag names no cluster:
    // its pod, if it is ours, brings it here) as our Slurm user (a copied comment is not ours)
    job.flatMap(views.cache()::ours).filter(t -> t.submittedBy(cluster)).ifPresent(queue::enqueue);
    leaderLeft(change, cluster);
  }

  /**
   * One of ours stopped waiting unheld in its partition (it started, ended, or was held): the
   * placeholders held behind it there may go now. Their own jobs did not change, so their passes
   * are asked for here; the periodic pass would find them too.
   */
  private void leaderLeft(JobChange change, String cluster) {
    Optional<SlurmJob> before = change.before().filter(SubmissionOrder::waiting);
    if (before.isEmpty() || change.after().filter(SubmissionOrder::waiting).isPresent()) {
      return;
    }
    String partition = before.get().partition();
    for (SlurmJob j : views.cache().snapshot().jobs().values()) {
      if (SubmissionOrder.held(j) && j.partition().equals(partition)) {
        views.cache().ours(j).filter(t -> t.submittedBy(cluster)).ifPresent(queue::enqueue);
      }
    }
  }

  /** Every placement: each pod of ours and each placeholder job. Periodic, and on takeover. */
  public int reconcileAll() {
    if (!views.mayAct().getAsBoolean()) {
      if (writer.getAsBoolean() && views.cache().lastError().isPresent()) {
        views.pods().pods().forEach(queue::onPod); // each pass tells its waiting pods why
      }
      return 0;
    }
    int n = 0;
    for (Pod p : views.pods().pods()) {
      queue.onPod(p);
      n++;
    }
    for (SlurmJob j : views.cache().snapshot().jobs().values()) {
      Optional<PlaceholderTag> t = views.cache().ours(j);
      if (t.isPresent() && !j.state().isFinal() && t.get().submittedBy(views.cluster().get())) {
        queue.enqueue(t.get());
        n++;
      }
    }
    return n;
  }

  /**
   * What the pod was last told about why it waits (its condition and Event), on the replica that
   * told it: the writer.
   */
  public Optional<WhyWaiting> toldWaiting(String podUid) {
    return runner.toldWaiting(podUid);
  }

  /** The new writer converges everything, exactly as after any other missed change. */
  public void takeOver() {
    // the previous writer's placeholders may be unknown here: nothing is done until the jobs made
    // since this cache last listed slurmctld's table are read, then every placement is converged
    takeover.now();
    takeover.relist(() -> LOG.info("writer_takeover placementsQueued={}", reconcileAll()));
  }

  // ---- one pass ------------------------------------------------------------------------------

  /** One pass for one placement (the pass thread). */
  void reconcile(Placement placement) {
    if (!views.mayAct().getAsBoolean()) {
      tellIfCatchingUpWithoutSlurm(placement);
      return;
    }
    Map<String, Optional<Pod>> pods = podsOf(placement);
    forgetRejectionOfAnotherGroup(placement);
    PlacementFacts facts = observer.facts(placement, pods);
    runner.run(placement, pods, facts, rules.decide(facts));
  }

  private Map<String, Optional<Pod>> podsOf(Placement placement) {
    Map<String, Optional<Pod>> pods = new HashMap<>();
    for (Placement.Slot m : placement.members()) {
      pods.put(m.ref().uid(), views.pods().pod(m.ref()));
    }
    return pods;
  }

  /**
   * The writer waits for a listing of Slurm's jobs after taking over; while Slurm does not answer
   * that wait has no end in sight, and a pod created meanwhile would hear nothing. It hears why.
   */
  private void tellIfCatchingUpWithoutSlurm(Placement placement) {
    if (!writer.getAsBoolean()) {
      return;
    }
    views
        .cache()
        .lastError()
        .ifPresent(
            e ->
                runner.tellWaiting(podsOf(placement), WhyWaiting.slurmUnreachable(e.getMessage())));
  }

  /** A group refused as it was is decided anew once its members changed. */
  private void forgetRejectionOfAnotherGroup(Placement placement) {
    if (views.registry().get(placement.key()).orElse(null) instanceof PlaceholderState.Rejected r
        && placement.group().isPresent()
        && !r.members().equals(placement.uids())) {
      views.registry().remove(placement.key());
    }
  }

  // ---- for the verbs, /explain and metrics ---------------------------------------------------

  /** The placement the pod is in now: its group's, or its own. */
  public Placement placementOf(PodRef ref) {
    return queue.placementOf(ref);
  }

  /**
   * The decision the placement of {@code pod} gets now, on the very facts and members a submission
   * now would use ({@code /explain}). {@link ClaimProblem} when its claims cannot be served.
   */
  public Decision decide(Pod pod) {
    return decide(placementOf(PodRef.of(pod)), pod);
  }

  /** As {@link #decide(Pod)}, for the placement the caller has already resolved for the pod. */
  public Decision decide(Placement placement, Pod pod) {
    Map<String, Optional<Pod>> now = new HashMap<>();
    placement.members().forEach(m -> now.put(m.ref().uid(), views.pods().pod(m.ref())));
    List<Pod> members = placement.needing(now);
    if (members.isEmpty()) {
      members = List.of(pod); // finished or being deleted: what it was decided on
    }
    return submitter.decide(placement, members.stream().map(podFacts::facts).toList());
  }

  /** Called after a successful bind: records pod creation → bound. */
  public void bound(PodRef ref) {
    runner.bound(ref);
  }

  /** The tier the policy gives the pod now, if the informer holds it and it is readable. */
  private static Optional<String> tierOf(
      PodRef ref, PodSource pods, PodFactsReader podFacts, Supplier<PlacementPolicy> policy) {
    try {
      return pods.pod(ref).map(p -> policy.get().tierName(podFacts.facts(p)));
    } catch (ClaimProblem | io.kse.policy.PodManifest.Unreadable e) {
      return Optional.empty();
    }
  }
}
