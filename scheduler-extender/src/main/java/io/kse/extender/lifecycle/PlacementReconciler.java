package io.kse.extender.lifecycle;

import io.fabric8.kubernetes.api.model.Pod;
import io.kse.extender.k8s.EventReason;
import io.kse.extender.k8s.KubeNodes;
import io.kse.extender.k8s.NodeNames;
import io.kse.extender.k8s.PodActions;
import io.kse.extender.k8s.PodRef;
import io.kse.extender.k8s.PodSource;
import io.kse.extender.k8s.WellKnown;
import io.kse.extender.lifecycle.PlacementFacts.PodStanding;
import io.kse.extender.metrics.ExtenderMetrics;
import io.kse.policy.PlacementPolicy;
import io.kse.policy.PreemptionLedger;
import io.kse.slurm.JobSubmission;
import io.kse.slurm.PlaceholderTag;
import io.kse.slurm.SlurmClient;
import io.kse.slurm.SlurmException;
import io.kse.slurm.SlurmJob;
import io.kse.slurm.SlurmNotFoundException;
import io.kse.slurm.cache.JobChange;
import io.kse.slurm.cache.SlurmStateCache;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps every placement as it must be: a pod runs if and only if its Slurm job holds its node, and
 * a placeholder job lives exactly as long as its pod. Level-triggered: each pass reads the pod from
 * the informer and the job from the cache, asks {@link PlacementRules} what must be done, and does
 * it; a pass runs for a placement whenever its pod or job changes, and for all of them periodically
 * and when this replica becomes the writer. So a transition that no poll saw, a restart or a
 * fail-over converge the same way. Passes run one at a time on {@code passes}; Slurm and API calls
 * on {@code workers}.
 */
public final class PlacementReconciler {
  private static final Logger LOG = LoggerFactory.getLogger(PlacementReconciler.class);

  /** A cancel that did not show in the cache within this is sent again. */
  static final Duration CANCEL_RETRY = Duration.ofSeconds(10);

  /** A job Slurm accepted but the cache never showed: stop waiting for it after this. */
  static final Duration SUBMIT_VISIBLE_WITHIN = Duration.ofSeconds(60);

  private final SlurmClient slurm;
  private final SlurmStateCache cache;
  private final PlaceholderRegistry registry;
  private final PodSource pods;
  private final PodActions actions;
  private final NodeNames nodeNames;
  private final Optional<KubeNodes> kubeNodes;
  private final Clock clock;
  private final Executor passes;
  private final Executor workers;
  private final BooleanSupplier mayAct;
  private final ExtenderMetrics metrics;
  private final PlacementRules rules;
  private final Submitter submitter;
  private final Evictions evictions;
  private final PreemptionAttribution attribution;
  private final Supplier<PlacementPolicy> policy;
  private final io.kse.extender.k8s.ClusterIdentity cluster;
  private final PodFactsReader podFacts;

  /** A namespace's PodGroups (scheduling.k8s.io) by name; empty where the API is not served. */
  private final PodGroupSource podGroups;

  /** How long a group may lack members before its pods are told so. */
  private final Duration groupIncompleteWait;

  /** The pods of each group, by group key and UID: kept from the informer's events. */
  private final Map<String, Map<String, PodRef>> groups = new ConcurrentHashMap<>();

  private final Set<String> queued = ConcurrentHashMap.newKeySet();

  /** Members woken for a job, by UID: which job, and the Kubernetes node they were sent to. */
  private final Map<String, Woken> woken = new ConcurrentHashMap<>();

  private record Woken(long jobId, String node) {}

  private final Map<Long, Instant> cancelling = new ConcurrentHashMap<>();
  private final Map<String, String> waitingSaid = new ConcurrentHashMap<>();

  /**
   * @param mayAct whether this replica may act now: it holds the writer lease and both views are
   *     synced (others keep their caches warm and answer kube-scheduler, nothing more)
   * @param pdbOverride how long a PodDisruptionBudget may hold off evicting a pod whose job ended
   */
  public PlacementReconciler(
      SlurmClient slurm,
      SlurmStateCache cache,
      Supplier<PlacementPolicy> policy,
      PreemptionLedger ledger,
      PlaceholderRegistry registry,
      PodSource pods,
      PodActions actions,
      NodeNames nodeNames,
      Optional<KubeNodes> kubeNodes,
      Clock clock,
      Executor passes,
      Executor workers,
      BooleanSupplier mayAct,
      String workDir,
      JobSubmission.Shape shape,
      Duration pdbOverride,
      PodGroupSource podGroups,
      Duration groupIncompleteWait,
      io.kse.extender.k8s.ClusterIdentity cluster,
      io.kse.extender.dra.GpuClaims gpuClaims,
      ExtenderMetrics metrics) {
    this.cluster = cluster;
    this.podGroups = podGroups;
    this.policy = policy;
    this.groupIncompleteWait = groupIncompleteWait;
    this.slurm = slurm;
    this.cache = cache;
    this.registry = registry;
    this.pods = pods;
    this.actions = actions;
    this.nodeNames = nodeNames;
    this.kubeNodes = kubeNodes;
    this.clock = clock;
    this.passes = passes;
    this.workers = workers;
    this.mayAct = mayAct;
    this.metrics = metrics;
    this.rules = new PlacementRules(nodeNames::kubernetes);
    this.podFacts = new PodFactsReader(gpuClaims);
    this.submitter =
        new Submitter(
            slurm,
            policy,
            ledger,
            registry,
            actions,
            clock,
            workDir,
            shape,
            this::domainsTakenBesides,
            cluster,
            podFacts);
    this.evictions = new Evictions(actions, metrics, clock, pdbOverride);
    this.attribution =
        new PreemptionAttribution(
            policy, ledger, actions, metrics, clock, workers, mayAct, this::tierOfPod, cache::ours);
    metrics.placeholders(registry::count, PlaceholderRegistry.STATES, Class::getSimpleName);
    metrics.heldForTerminating(heldForTerminating::size);
  }

  // ---- what triggers a pass ------------------------------------------------------------------

  /** Schedules a pass for the pod's placement (deduplicated while one is queued). */
  public void enqueue(PodRef ref) {
    Optional<String> group = pods.pod(ref).flatMap(this::track);
    if (group.isPresent()) {
      enqueueGroup(group.get(), ref.namespace());
    } else {
      enqueue(ref.uid(), () -> reconcile(Placement.of(ref)), ref);
    }
  }

  private void enqueueGroup(String key, String namespace) {
    enqueue(key, () -> reconcile(group(key, namespace)), key);
  }

  private void enqueue(String key, Runnable pass, Object what) {
    if (!queued.add(key)) {
      return;
    }
    try {
      passes.execute(
          () -> {
            queued.remove(key);
            try {
              pass.run();
            } catch (RuntimeException e) {
              LOG.warn("reconcile_failed placement={} error={}", what, e.toString(), e);
            }
          });
    } catch (RejectedExecutionException e) {
      queued.remove(key); // shutting down
    }
  }

  /** The pod appeared or changed in the informer. */
  public void onPod(Pod pod) {
    Optional<String> group = track(pod);
    if (group.isPresent()) {
      enqueueGroup(group.get(), pod.getMetadata().getNamespace());
    } else {
      enqueue(ref(pod));
    }
  }

  /** The pod was deleted. */
  public void onPodDeleted(Pod pod) {
    podFacts.forget(pod.getMetadata().getUid());
    Optional<GroupMembership> m = membership(pod);
    if (m.isPresent()) {
      String key = m.get().key(pod.getMetadata().getNamespace());
      groups.computeIfPresent(
          key,
          (k, members) -> {
            members.remove(pod.getMetadata().getUid());
            return members.isEmpty() ? null : members;
          });
      enqueueGroup(key, pod.getMetadata().getNamespace());
    } else {
      enqueue(ref(pod));
    }
  }

  /** A PodGroup (Workload API) appeared, changed or went: its gang's size may have changed. */
  public void onPodGroup(String namespace, String name) {
    enqueueGroup(PlaceholderTag.groupKey(namespace, "podgroup/" + name), namespace);
  }

  /** Records a group member under its group; the group's key, if the pod is in one. */
  private Optional<String> track(Pod pod) {
    return membership(pod)
        .map(
            m -> {
              String key = m.key(pod.getMetadata().getNamespace());
              groups
                  .computeIfAbsent(key, k -> new ConcurrentHashMap<>())
                  .put(pod.getMetadata().getUid(), ref(pod));
              return key;
            });
  }

  private Optional<GroupMembership> membership(Pod pod) {
    String ns = pod.getMetadata().getNamespace();
    return GroupMembership.of(pod, name -> podGroups.podGroup(ns, name));
  }

  /** The group as the informer has it now (members recreated or gone included). */
  private Placement group(String key, String namespace) {
    List<Pod> members = new java.util.ArrayList<>();
    for (PodRef r : groups.getOrDefault(key, Map.of()).values()) {
      pods.pod(r).ifPresent(members::add);
    }
    return Placement.group(
        key,
        namespace,
        members,
        name -> podGroups.podGroup(namespace, name),
        new Members(cache.jobFor(key)));
  }

  /**
   * What this extender knows of a group's members: the seat each holds in the group's current job
   * (the node it is bound to, or was sent to — by its annotations, or by a wake-up the informer has
   * not shown yet), and the GPUs each asks.
   */
  private final class Members implements Placement.MemberView {
    private final Optional<SlurmJob> job;

    Members(Optional<SlurmJob> job) {
      this.job = job.filter(SlurmJob::isAllocated);
    }

    @Override
    public java.util.OptionalInt seat(Pod pod) {
      if (job.isEmpty()) {
        return java.util.OptionalInt.empty();
      }
      String node = pod.getSpec().getNodeName();
      if (node == null || node.isEmpty()) {
        Map<String, String> a = pod.getMetadata().getAnnotations();
        Woken w = woken.get(pod.getMetadata().getUid());
        if (a != null && Long.toString(job.get().id()).equals(a.get(WellKnown.JOB_ANNOTATION))) {
          node = a.get(WellKnown.NODE_ANNOTATION);
        } else if (w != null && w.jobId() == job.get().id()) {
          node = w.node();
        }
      }
      if (node == null || node.isEmpty()) {
        return java.util.OptionalInt.empty();
      }
      List<String> nodes = job.get().nodes();
      for (int i = 0; i < nodes.size(); i++) {
        if (nodeNames.kubernetes(nodes.get(i)).equals(node)) {
          return java.util.OptionalInt.of(i);
        }
      }
      return java.util.OptionalInt.empty();
    }

    @Override
    public long gpus(Pod pod) {
      return podFacts.gpus(pod);
    }
  }

  /** The placement the pod is in now: its group's, or its own. */
  public Placement placementOf(PodRef ref) {
    Optional<Pod> pod = pods.pod(ref);
    Optional<GroupMembership> m = pod.flatMap(this::membership);
    return m.map(g -> group(g.key(ref.namespace()), ref.namespace()))
        .orElseGet(() -> Placement.of(ref));
  }

  /**
   * The Slurm node features of the nodes that other LeaderWorkerSet groups' live jobs hold: with
   * exclusive-topology, LWS keeps leaders of different groups out of each other's domain, so a
   * group's job must be placed in a domain none of them holds.
   */
  public Set<String> domainsTakenBesides(String key) {
    return domainsTaken(key, Long.MAX_VALUE);
  }

  /** As {@link #domainsTakenBesides}, counting only jobs submitted before {@code beforeJob}. */
  private Set<String> domainsTaken(String key, long beforeJob) {
    Set<String> taken = new java.util.TreeSet<>();
    List<String> domains = policy.get().policy().cluster().nvlinkDomainFeatures();
    for (SlurmJob j : cache.snapshot().jobs().values()) {
      Optional<PlaceholderTag> t = cache.ours(j);
      if (t.isPresent()
          && j.id() < beforeJob
          && !j.state().isFinal()
          && j.state().holdsNodes()
          && t.get().group().map(g -> g.startsWith("lws/")).orElse(false)
          && !t.get().key().equals(key)) {
        for (String n : j.nodes()) {
          cache
              .node(n)
              .ifPresent(
                  node -> node.features().stream().filter(domains::contains).forEach(taken::add));
        }
      }
    }
    return taken;
  }

  /** The UIDs of a placement's members, as a stable signature of who they are. */
  static String uids(Placement p) {
    return p.members().stream()
        .map(s -> s.ref().uid())
        .sorted()
        .collect(java.util.stream.Collectors.joining(","));
  }

  /** A Slurm job changed (cache listener): its placement, and preemption attribution. */
  public void onJobChange(JobChange change) {
    // every replica follows every job, so a victim that was running before this one became the
    // writer is known when it loses its nodes; only the writer charges and tells
    Optional<SlurmJob> job = change.after().or(change::before);
    if (job.flatMap(SlurmJob::placeholder).filter(t -> t.foreignTo(cluster.get())).isPresent()) {
      return; // another Kubernetes cluster's placeholder, on the Slurm we share
    }
    attribution.observe(change);
    // from Slurm's side alone, only what this cluster submitted (an older tag names no cluster:
    // its pod, if it is ours, brings it here) as our Slurm user (a copied comment is not ours)
    job.flatMap(cache::ours).filter(t -> t.submittedBy(cluster.get())).ifPresent(this::enqueue);
  }

  /** Every placement: each pod of ours and each placeholder job. Periodic, and on takeover. */
  public int reconcileAll() {
    if (!mayAct.getAsBoolean()) {
      return 0;
    }
    int n = 0;
    for (Pod p : pods.pods()) {
      onPod(p);
      n++;
    }
    for (SlurmJob j : cache.snapshot().jobs().values()) {
      Optional<PlaceholderTag> t = cache.ours(j);
      if (t.isPresent() && !j.state().isFinal() && t.get().submittedBy(cluster.get())) {
        enqueue(t.get());
        n++;
      }
    }
    return n;
  }

  /** The placement a placeholder stands for: its group, or its pod. */
  private void enqueue(PlaceholderTag tag) {
    if (tag.group().isPresent()) {
      enqueueGroup(tag.key(), tag.namespace());
    } else {
      enqueue(PodRef.of(tag));
    }
  }

  /** The new writer converges everything, exactly as after any other missed change. */
  public void takeOver() {
    LOG.info("writer_takeover placementsQueued={}", reconcileAll());
  }

  // ---- one pass ------------------------------------------------------------------------------

  /** One pass for the placement the pod belongs to (the reconcile thread). */
  void reconcile(PodRef ref) {
    reconcile(placementOf(ref));
  }

  /** One pass for one placement (the reconcile thread). */
  void reconcile(Placement placement) {
    if (!mayAct.getAsBoolean()) {
      return;
    }
    Map<String, Optional<Pod>> pods = new java.util.HashMap<>();
    for (Placement.Slot m : placement.members()) {
      pods.put(m.ref().uid(), this.pods.pod(m.ref()));
    }
    PlacementFacts facts = facts(placement, pods);
    List<Step> steps = rules.decide(facts);
    for (Placement.Slot slot : placement.members()) { // what no step of this pass is about, is over
      PodRef m = slot.ref();
      if (steps.stream().noneMatch(st -> st instanceof Step.Waiting w && w.member().equals(m))) {
        waitingSaid.remove(m.uid());
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
        placement.members().forEach(m -> woken.remove(m.ref().uid()));
      } else if (step instanceof Step.Submit s) {
        submit(placement, pods, facts, s.why());
      } else if (step instanceof Step.Waiting w) {
        if (!brieflyPending(w, facts)) {
          waiting(w.member(), w);
        }
      } else if (step instanceof Step.Wake w) {
        wake(w.member(), pods.get(w.member().uid()).orElseThrow(), w);
      } else if (step instanceof Step.Cancel c) {
        cancel(placement, c.jobId(), c.why());
      } else if (step instanceof Step.Replace r) {
        replace(placement, r);
      } else if (step instanceof Step.Evict e) {
        evict(e.member(), e);
      } else if (step instanceof Step.HeldForTerminating h) {
        heldForTerminating(h);
      }
    }
  }

  /** A Workload API gang whose every member is bound: its PodGroup says so, once. */
  private void podGroupPlaced(Placement placement, PlacementFacts facts) {
    Optional<Placement.Group> g = placement.group();
    if (g.isEmpty() || !g.get().id().startsWith(PODGROUP)) {
      return;
    }
    String name = g.get().id().substring(PODGROUP.length());
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
    execute(
        placement.members().get(0).ref(),
        () ->
            podGroups.markScheduled(
                ns, name, "all " + placement.size() + " members bound by Slurm job " + job),
        () -> podGroupsMarked.remove(placement.key()));
  }

  private static final String PODGROUP = "podgroup/";
  private final Map<String, Long> podGroupsMarked = new ConcurrentHashMap<>();

  private PlacementFacts facts(Placement placement, Map<String, Optional<Pod>> pods) {
    Optional<SlurmJob> job = cache.jobFor(placement.key());
    Optional<PlaceholderState> own = registry.get(placement.key());
    if (own.orElse(null) instanceof PlaceholderState.Rejected r
        && placement.group().isPresent()
        && !r.members().equals(uids(placement))) {
      registry.remove(placement.key()); // the group changed: decide it anew
      own = Optional.empty();
    }
    Optional<Long> notSeen = Optional.empty();
    boolean retryDue = false;
    Instant now = clock.instant();
    if (own.orElse(null) instanceof PlaceholderState.Submitted s
        && cache.job(s.jobId()).isEmpty()
        && now.isBefore(s.at().plus(SUBMIT_VISIBLE_WITHIN))) {
      notSeen = Optional.of(s.jobId());
    }
    if (own.orElse(null) instanceof PlaceholderState.SubmitFailed f) {
      retryDue = !now.isBefore(f.retryAt());
    }
    // only a member still to be bound can be sent elsewhere: skip the node lookups otherwise
    boolean pending =
        pods.values().stream().anyMatch(p -> PodStanding.of(p) == PodStanding.PENDING);
    Optional<String> unusable =
        job.filter(j -> pending && j.isAllocated())
            .flatMap(
                j ->
                    j.nodes().stream()
                        .map(n -> unusable(nodeNames.kubernetes(n)))
                        .flatMap(Optional::stream)
                        .findFirst());
    if (unusable.isEmpty()
        && pending
        && placement.group().map(Placement.Group::exclusiveTopology).orElse(false)
        && job.map(SlurmJob::isAllocated).orElse(false)) {
      unusable = sharedDomain(placement.key(), job.get());
    }
    List<PlacementFacts.Member> members = new java.util.ArrayList<>();
    Instant oldest = now;
    for (Placement.Slot slot : placement.members()) {
      PodRef m = slot.ref();
      Optional<Pod> pod = pods.get(m.uid());
      long wokenFor = Optional.ofNullable(woken.get(m.uid())).map(Woken::jobId).orElse(0L);
      members.add(
          new PlacementFacts.Member(
              m,
              PodStanding.of(pod),
              pod.map(p -> p.getSpec().getNodeName()).orElse(""),
              slot.index(),
              job.map(j -> j.id() == wokenFor).orElse(false),
              pod.flatMap(PlacementReconciler::deletionDeadline)
                  .map(d -> now.isAfter(d.plus(STUCK_TERMINATING)))
                  .orElse(false),
              slot.gpus()));
      Optional<Instant> created = pod.flatMap(PlacementReconciler::created);
      if (created.isPresent() && created.get().isBefore(oldest)) {
        oldest = created.get();
      }
    }
    boolean overdue = !now.isBefore(oldest.plus(groupIncompleteWait));
    return new PlacementFacts(
        members,
        placement.size(),
        placement.group(),
        overdue,
        job,
        own,
        notSeen,
        unusable,
        retryDue);
  }

  /**
   * Two exclusive groups submitted at once may land in one domain: the later job gives way (so the
   * two never both step back), and is replaced outside the domains others hold.
   */
  private Optional<String> sharedDomain(String key, SlurmJob job) {
    Set<String> taken = domainsTaken(key, job.id());
    for (String n : job.nodes()) {
      Optional<String> shared =
          cache.node(n).stream()
              .flatMap(node -> node.features().stream())
              .filter(taken::contains)
              .findFirst();
      if (shared.isPresent()) {
        return Optional.of(
            n
                + " is in "
                + shared.get()
                + ", which another exclusive-topology group holds (LeaderWorkerSet keeps their"
                + " leaders apart)");
      }
    }
    return Optional.empty();
  }

  private static Optional<Instant> created(Pod pod) {
    try {
      return Optional.of(Instant.parse(pod.getMetadata().getCreationTimestamp()));
    } catch (RuntimeException e) {
      return Optional.empty();
    }
  }

  /** Why the pod could not go to {@code node} now: cordoned, or drained in Slurm (our taint). */
  private Optional<String> unusable(String node) {
    return kubeNodes
        .flatMap(k -> k.node(node))
        .flatMap(
            n ->
                n.cordoned()
                    ? Optional.of(node + " is cordoned")
                    : n.ourTaint().map(t -> node + " is drained in Slurm (" + t + ")"));
  }

  // ---- steps ---------------------------------------------------------------------------------

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
    List<Pod> members = needing(placement, pods);
    placement.members().forEach(m -> woken.remove(m.ref().uid()));
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
                    ref(m), EventReason.JOB_ENDED, why + "; submitting a new placeholder");
              }
            });
    PodRef lead = ref(members.get(0));
    execute(
        lead,
        () -> {
          long id = submitter.submit(placement, members);
          if (id != 0 && members.stream().allMatch(m -> this.pods.pod(ref(m)).isEmpty())) {
            cancelNow(lead, id, "pods deleted while their placeholder was being submitted");
          }
          enqueue(lead);
        },
        () -> registry.remove(placement.key()));
  }

  /**
   * Pods Terminating long past their deadline whose placeholder is kept for them (uid → job): the
   * gauge {@code kse_placeholders_held_for_terminating_pods}, and one Event each.
   */
  private final Map<String, Long> heldForTerminating = new ConcurrentHashMap<>();

  /** How long past its deletion deadline a bound pod may stay Terminating before users are told. */
  static final Duration STUCK_TERMINATING = Duration.ofSeconds(60);

  private void heldForTerminating(Step.HeldForTerminating h) {
    PodRef ref = h.member();
    if (Long.valueOf(h.jobId()).equals(heldForTerminating.put(ref.uid(), h.jobId()))) {
      return;
    }
    String message =
        "the pod is still Terminating on "
            + h.boundNode()
            + " more than "
            + STUCK_TERMINATING.toSeconds()
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
    execute(
        ref,
        () -> actions.event(ref, EventReason.HELD_FOR_TERMINATING, message),
        () -> heldForTerminating.remove(ref.uid()));
  }

  /**
   * How long a placeholder pends before its pods are told why they wait. Pending a moment is how
   * every placeholder starts (slurmctld schedules in passes): saying so at once cost each pod of a
   * burst a condition patch and an Event, and the API server's CPU is what a burst waits for. The
   * periodic pass says it once this has passed.
   */
  static final Duration PENDING_QUIET = Duration.ofSeconds(2);

  private boolean brieflyPending(Step.Waiting w, PlacementFacts facts) {
    return w.reason() == WaitReason.SLURM_PENDING
        && facts
            .job()
            .map(j -> clock.instant().isBefore(j.submitTime().plus(PENDING_QUIET)))
            .orElse(false);
  }

  private void waiting(PodRef ref, Step.Waiting w) {
    String said = w.reason().reason() + "|" + w.message();
    if (said.equals(waitingSaid.put(ref.uid(), said))) {
      return;
    }
    execute(
        ref,
        () -> {
          actions.condition(ref, false, w.reason().reason(), w.message());
          actions.event(ref, EventReason.WAITING, w.message());
        },
        () -> waitingSaid.remove(ref.uid()));
  }

  private void wake(PodRef ref, Pod pod, Step.Wake w) {
    // the rules wake once per job; a failed wake undoes this
    woken.put(ref.uid(), new Woken(w.jobId(), w.node()));
    LOG.info(
        "placeholder_allocated pod={} uid={} slurmJob={} node={}",
        ref,
        ref.uid(),
        w.jobId(),
        w.node());
    age(pod).ifPresent(metrics::allocated);
    boolean gated = gated(pod);
    execute(
        ref,
        () -> {
          if (!actions.wake(ref, w.node(), w.jobId(), gated)) {
            woken.remove(ref.uid()); // the next pass tries again
            return;
          }
          actions.event(
              ref, EventReason.ALLOCATED, "Slurm job " + w.jobId() + " allocated node " + w.node());
        },
        () -> woken.remove(ref.uid()));
  }

  private void replace(Placement placement, Step.Replace r) {
    if (!mayCancel(r.jobId()) || placement.members().isEmpty()) {
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
      woken.remove(m.ref().uid());
    }
    execute(ref, () -> cancelNow(ref, r.jobId(), r.why()), () -> cancelling.remove(r.jobId()));
  }

  private void cancel(Placement placement, long jobId, String why) {
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
    execute(ref, () -> cancelNow(ref, jobId, why), () -> cancelling.remove(jobId));
  }

  private void evict(PodRef ref, Step.Evict e) {
    if (!evictions.claim(ref.uid())) {
      return;
    }
    LOG.info("placeholder_lost pod={} uid={} action=evict reason=\"{}\"", ref, ref.uid(), e.why());
    execute(
        ref,
        () -> {
          if (e.jobToCancel() != 0 && mayCancel(e.jobToCancel())) {
            cancelNow(ref, e.jobToCancel(), "its pod is being evicted: " + e.why());
          }
          evictions.run(ref, e.why(), e.reason());
        },
        () -> evictions.forget(ref.uid()));
  }

  /** True when no cancel of this job was sent recently (then records this one). */
  private boolean mayCancel(long jobId) {
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

  private void cancelNow(PodRef ref, long jobId, String why) {
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

  /** Runs a step's calls on a worker; {@code undo} when it cannot be run (shutting down). */
  private void execute(PodRef ref, Runnable calls, Runnable undo) {
    try {
      workers.execute(
          () -> {
            try {
              calls.run();
            } catch (RuntimeException e) {
              undo.run();
              LOG.warn("step_failed pod={} uid={} error={}", ref, ref.uid(), e.toString(), e);
            }
          });
    } catch (RejectedExecutionException e) {
      undo.run();
    }
  }

  // ---- for the bind path and metrics ---------------------------------------------------------

  /** Called after a successful bind: records pod creation → bound. */
  public void bound(PodRef ref) {
    pods.pod(ref).flatMap(this::age).ifPresent(metrics::bound);
  }

  private Optional<Duration> age(Pod pod) {
    return created(pod).map(c -> Duration.between(c, clock.instant()));
  }

  /** The tier the policy gives the pod now, if the informer holds it and it is readable. */
  private Optional<String> tierOfPod(PodRef ref) {
    try {
      return pods.pod(ref).map(p -> policy.get().tierName(podFacts.facts(p)));
    } catch (io.kse.extender.dra.ClaimProblem | IllegalArgumentException e) {
      return Optional.empty();
    }
  }

  /**
   * The members that exist and still need the job, in index order (the leader first): what a
   * placement is decided on.
   */
  private static List<Pod> needing(Placement placement, Map<String, Optional<Pod>> pods) {
    return placement.members().stream()
        .sorted(java.util.Comparator.comparingInt(Placement.Slot::index))
        .map(m -> pods.get(m.ref().uid()).filter(p -> PodStanding.of(Optional.of(p)).needsJob()))
        .flatMap(Optional::stream)
        .toList();
  }

  /**
   * The decision the placement of {@code pod} gets now, on the very facts and members a submission
   * now would use ({@code /explain}). {@link io.kse.extender.dra.ClaimProblem} when its claims
   * cannot be served.
   */
  public io.kse.policy.Decision decide(Pod pod) {
    Placement placement = placementOf(ref(pod));
    Map<String, Optional<Pod>> now = new java.util.HashMap<>();
    placement.members().forEach(m -> now.put(m.ref().uid(), pods.pod(m.ref())));
    List<Pod> members = needing(placement, now);
    if (members.isEmpty()) {
      members = List.of(pod); // finished or being deleted: what it was decided on
    }
    return submitter.decide(placement, members.stream().map(podFacts::facts).toList());
  }

  /** When the pod's grace period ends (its deletion timestamp), if it is being deleted. */
  private static Optional<Instant> deletionDeadline(Pod p) {
    String at = p.getMetadata().getDeletionTimestamp();
    try {
      return at == null ? Optional.empty() : Optional.of(Instant.parse(at));
    } catch (java.time.format.DateTimeParseException e) {
      return Optional.empty();
    }
  }

  /** Held by our scheduling gate (manifests/base/scheduling-gate.yaml). */
  static boolean gated(Pod p) {
    return p.getSpec().getSchedulingGates() != null
        && p.getSpec().getSchedulingGates().stream()
            .anyMatch(g -> WellKnown.SCHEDULING_GATE.equals(g.getName()));
  }

  public static PodRef ref(Pod p) {
    return new PodRef(
        p.getMetadata().getNamespace(), p.getMetadata().getName(), p.getMetadata().getUid());
  }
}
