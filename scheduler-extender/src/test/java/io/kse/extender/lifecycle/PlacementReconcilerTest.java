package io.kse.extender.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.kse.extender.k8s.EventReason;
import io.kse.extender.k8s.KubeNodes;
import io.kse.extender.k8s.NodeNames;
import io.kse.extender.k8s.PodActions;
import io.kse.extender.k8s.PodRef;
import io.kse.extender.k8s.PodSource;
import io.kse.extender.testing.FakeSlurm;
import io.kse.policy.PlacementPolicy;
import io.kse.policy.PolicyParser;
import io.kse.policy.PreemptionLedger;
import io.kse.slurm.JobState;
import io.kse.slurm.JobSubmission;
import io.kse.slurm.PlaceholderTag;
import io.kse.slurm.SlurmJob;
import io.kse.slurm.cache.SlurmStateCache;
import io.kse.slurm.testing.FakeSlurmClient;
import io.kse.slurm.testing.MutableClock;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The reconciler's rules in every sequence the issue lists, and the ones before it: each pass is
 * run on the calling thread, so the test sees its effects at once.
 */
class PlacementReconcilerTest {
  static final String POLICY =
      """
      apiVersion: kse.io/v1alpha1
      kind: PlacementPolicy
      cluster: {preemptMode: partition, gpuGres: gpu, gpuType: h100, nvlinkDomainFeatures: [nvl-0, nvl-1]}
      defaultTier: inference
      tiers:
        - name: serving
          match: {labels: {kse-test/tier: serving}}
          slurm: {partition: inference}
          mayPreempt: [training]
        - name: inference
          slurm: {partition: inference}
          mayPreempt: [training]
          maxNodes: 8
        - name: training
          match: {labels: {kse-test/tier: training}}
          slurm: {partition: training}
          preemptible: true
      """;

  final FakeSlurm fake = new FakeSlurm();
  final FakeSlurmClient slurm = fake.client;
  final SlurmStateCache cache = fake.cache;
  final PlaceholderRegistry registry = new PlaceholderRegistry();
  final SimpleMeterRegistry meters = new SimpleMeterRegistry();
  final io.kse.extender.metrics.ExtenderMetrics metrics =
      new io.kse.extender.metrics.ExtenderMetrics(meters);
  final Map<String, Pod> pods = new ConcurrentHashMap<>();
  final List<String> actions = new ArrayList<>();
  final MutableClock clock = new MutableClock(Instant.now());
  final java.util.concurrent.atomic.AtomicBoolean writer =
      new java.util.concurrent.atomic.AtomicBoolean(true);
  final Map<String, KubeNodes.KubeNode> nodes = new ConcurrentHashMap<>();
  final Map<String, PodActions.EvictResult> evictAnswer = new ConcurrentHashMap<>();
  final PlacementReconciler lifecycle = reconciler(registry);

  PlacementReconciler reconciler(PlaceholderRegistry reg) {
    return new PlacementReconciler(
        slurm,
        cache,
        () -> new PlacementPolicy(PolicyParser.parse(POLICY, "test")),
        new PreemptionLedger(),
        reg,
        new PodSource() {
          @Override
          public Optional<Pod> pod(String ns, String name) {
            return Optional.ofNullable(pods.get(ns + "/" + name));
          }

          @Override
          public List<Pod> pods() {
            return List.copyOf(pods.values());
          }
        },
        new PodActions() {
          @Override
          public void event(PodRef pod, EventReason reason, String message) {
            actions.add("event " + reason.reason() + ": " + message);
          }

          @Override
          public boolean wake(PodRef pod, String node, long jobId, boolean gated) {
            actions.add("wake " + pod + " -> " + node);
            return true;
          }

          @Override
          public void ungate(PodRef pod) {
            actions.add("ungate " + pod);
          }

          @Override
          public EvictResult evict(PodRef pod, String reason) {
            actions.add("evict " + pod + ": " + reason);
            return evictAnswer.getOrDefault(pod.uid(), EvictResult.EVICTED);
          }

          @Override
          public boolean delete(PodRef pod, String reason) {
            actions.add("delete " + pod);
            return true;
          }

          @Override
          public void condition(PodRef pod, boolean allocated, String reason, String message) {
            actions.add("condition " + allocated + " " + reason + ": " + message);
          }
        },
        new NodeNames(),
        Optional.of(new StaticNodes(nodes)),
        clock,
        new DirectExecutor(),
        new DirectExecutor(),
        writer::get,
        "/tmp",
        JobSubmission.Shape.BATCH,
        Duration.ofSeconds(60),
        PodGroupSource.none(),
        GROUP_WAIT,
        io.kse.extender.k8s.ClusterIdentity.of(CLUSTER),
        io.kse.extender.dra.GpuClaims.none(),
        metrics);
  }

  {
    cache.addJobListener(lifecycle::onJobChange);
    // as ExtenderService does once the identity is known
    cache.owner(
        new io.kse.slurm.PlaceholderOwner(Optional.of(CLUSTER), Optional.of(FakeSlurmClient.USER)));
  }

  static final Duration GROUP_WAIT = Duration.ofSeconds(30);
  static final String CLUSTER = "test-cluster";

  /** Kubernetes nodes as a map: cordons and taints set by the test. */
  record StaticNodes(Map<String, KubeNodes.KubeNode> byName) implements KubeNodes {
    @Override
    public java.util.Collection<KubeNode> nodes() {
      return byName.values();
    }

    @Override
    public Optional<KubeNode> node(String name) {
      return Optional.ofNullable(byName.get(name));
    }

    @Override
    public boolean taint(String node, String value) {
      return true;
    }

    @Override
    public boolean untaint(String node) {
      return true;
    }
  }

  /** Runs tasks on the calling thread, so tests see their effects at once. */
  static final class DirectExecutor extends AbstractExecutorService {
    @Override
    public void execute(Runnable r) {
      r.run();
    }

    @Override
    public void shutdown() {}

    @Override
    public List<Runnable> shutdownNow() {
      return List.of();
    }

    @Override
    public boolean isShutdown() {
      return false;
    }

    @Override
    public boolean isTerminated() {
      return false;
    }

    @Override
    public boolean awaitTermination(long t, TimeUnit u) {
      return true;
    }
  }

  Pod pod(String name, String uid, Map<String, String> annotations) {
    Pod p =
        io.kse.extender.testing.Pods.pending(name, 3, 4, annotations)
            .editMetadata()
            .withUid(uid)
            .withCreationTimestamp(java.time.Instant.now().minusSeconds(2).toString())
            .endMetadata()
            .build();
    pods.put("serving/" + name, p);
    return p;
  }

  /**
   * What Slurm does in one scheduling pass: a training job on {@code trainingNode} is requeued and
   * a pod's placeholder starts on {@code placeholderNode}. Returns the training job's id.
   */
  long requeueTrainingAndStartPlaceholder(String trainingNode, String placeholderNode) {
    long training = slurm.addForeignJob("train-3", JobState.RUNNING, List.of(trainingNode));
    long id = submitted(pod("llm-0", "uid-1", Map.of()));
    cache.pollOnce();
    slurm.requeue(training);
    slurm.allocate(id, List.of(placeholderNode));
    cache.pollOnce();
    return training;
  }

  /** The pod appears; returns the job id of the placeholder it got. */
  long submitted(Pod p) {
    lifecycle.onPod(p);
    return ((PlaceholderState.Submitted) registry.get(p.getMetadata().getUid()).orElseThrow())
        .jobId();
  }

  @Test
  void submitsOnePlaceholderPerPodWhateverHowOftenAsked() {
    Pod p = pod("llm-0", "uid-1", Map.of());
    lifecycle.onPod(p);
    lifecycle.enqueue(PlacementReconciler.ref(p));
    lifecycle.onPod(p);
    assertThat(slurm.submissions()).hasSize(1);
    JobSubmission s = slurm.submissions().get(0);
    assertThat(s.partition()).contains("inference");
    assertThat(s.gresPerNode()).contains("gpu:h100:4");
    assertThat(s.cpusPerNode()).isEqualTo(3);
    assertThat(s.memoryPerNodeMb()).isEqualTo(2048);
    assertThat(s.tag().uid()).isEqualTo("uid-1");
    assertThat(registry.get("uid-1")).get().isInstanceOf(PlaceholderState.Submitted.class);
    assertThat(actions)
        .anySatisfy(
            a ->
                assertThat(a)
                    .startsWith("event SlurmJobSubmitted: placeholder submitted as Slurm job"));
  }

  @Test
  void aPolicyRejectionIsRecordedAndExplained() {
    lifecycle.onPod(pod("llm-0", "uid-1", Map.of("kse.io/topology", "ring")));
    assertThat(slurm.submissions()).isEmpty();
    assertThat(registry.get("uid-1")).get().isInstanceOf(PlaceholderState.Rejected.class);
    assertThat(actions)
        .containsExactly(
            "event PlacementRejected: annotation kse.io/topology=ring is not a topology; use none or nvlink-domain",
            "condition false Rejected: annotation kse.io/topology=ring is not a topology; use none or nvlink-domain",
            "ungate serving/llm-0");
  }

  @Test
  void aSlurmOutageBacksOffAndIsRetriedLater() {
    slurm.failWith(FakeSlurmClient.outage());
    Pod p = pod("llm-0", "uid-1", Map.of());
    lifecycle.onPod(p);
    assertThat(registry.get("uid-1"))
        .get()
        .isInstanceOfSatisfying(
            PlaceholderState.SubmitFailed.class, f -> assertThat(f.attempts()).isEqualTo(1));
    slurm.failWith(null);
    lifecycle.onPod(p); // still inside the backoff
    assertThat(slurm.submissions()).isEmpty();
    assertThat(actions)
        .contains(
            "condition false SubmitFailed: the Slurm placeholder could not be submitted: Slurm unavailable");
    clock.advance(Duration.ofSeconds(2));
    lifecycle.onPod(p);
    assertThat(slurm.submissions()).hasSize(1);
  }

  @Test
  void aPlaceholderAllocatedWhileNoWriterWatchedIsAdoptedAndThePodWoken() {
    // found by e2e: after a crash, a pending pod whose job was already running was never woken
    writer.set(false);
    Pod p = pod("llm-0", "uid-1", Map.of());
    long id =
        slurm.submit(
            JobSubmission.builder(new PlaceholderTag("serving", "llm-0", "uid-1")).build());
    slurm.allocate(id, List.of("gpu-node-2"));
    cache.pollOnce();
    actions.clear();
    writer.set(true);
    lifecycle.takeOver();
    assertThat(slurm.submissions()).as("adopted, not submitted again").hasSize(1);
    assertThat(registry.get("uid-1")).as("nothing in flight: Slurm's record is enough").isEmpty();
    assertThat(actions).contains("wake serving/llm-0 -> gpu-node-2");
  }

  @Test
  void aFailedSubmissionIsRetriedByHousekeepingOnceItsBackoffPassed() {
    slurm.failWith(FakeSlurmClient.outage());
    lifecycle.onPod(pod("llm-0", "uid-1", Map.of()));
    slurm.failWith(null);
    lifecycle.reconcileAll();
    assertThat(slurm.submissions()).as("inside the backoff").isEmpty();
    clock.advance(Duration.ofSeconds(3));
    lifecycle.reconcileAll();
    assertThat(slurm.submissions()).hasSize(1);
    assertThat(registry.get("uid-1")).get().isInstanceOf(PlaceholderState.Submitted.class);
  }

  @Test
  void wakesThePodWhenSlurmAllocatesAndCancelsTheJobWhenThePodGoes() {
    Pod p = pod("llm-0", "uid-1", Map.of());
    long id = submitted(p);
    cache.pollOnce();
    slurm.allocate(id, List.of("gpu-node-1"));
    cache.pollOnce();
    assertThat(actions)
        .contains(
            "event AllocatedBySlurm: Slurm job " + id + " allocated node gpu-node-1",
            "wake serving/llm-0 -> gpu-node-1");
    pods.remove("serving/llm-0"); // as the informer: gone from its store, then the delete event
    lifecycle.onPodDeleted(p);
    assertThat(slurm.job(id).map(SlurmJob::state)).contains(JobState.CANCELLED);
    cache.pollOnce(); // once the cache shows the job ended, nothing is remembered
    assertThat(registry.get("uid-1")).isEmpty();
  }

  @Test
  void aPodDeletedBeforeTheCacheSawItsPlaceholderStillCancelsIt() {
    // found by e2e: the delete came before the next poll, so the cache had no job for the pod
    Pod p = pod("llm-0", "uid-1", Map.of());
    long id = submitted(p);
    pods.remove("serving/llm-0");
    lifecycle.onPodDeleted(p);
    assertThat(slurm.job(id).map(SlurmJob::state)).contains(JobState.CANCELLED);
  }

  @Test
  void aPodDeletedWhileItsPlaceholderIsSubmittedCancelsIt() {
    Pod p = pod("llm-0", "uid-1", Map.of());
    slurm.duringSubmit(
        () -> {
          pods.remove("serving/llm-0");
          lifecycle.onPodDeleted(p); // nothing to cancel yet: the submit has not answered
        });
    lifecycle.onPod(p);
    assertThat(slurm.submissions()).hasSize(1);
    assertThat(slurm.jobsChangedSince(java.time.Instant.EPOCH).jobs())
        .singleElement()
        .satisfies(j -> assertThat(j.state()).isEqualTo(JobState.CANCELLED));
    cache.pollOnce();
    assertThat(registry.get("uid-1")).isEmpty();
  }

  @Test
  void evictsABoundPodWhosePlaceholderWasPreempted() {
    Pod p = pod("llm-0", "uid-1", Map.of());
    long id = submitted(p);
    slurm.allocate(id, List.of("gpu-node-1"));
    cache.pollOnce();
    p.getSpec().setNodeName("gpu-node-1");
    slurm.requeue(id);
    cache.pollOnce();
    assertThat(actions)
        .contains("evict serving/llm-0: Slurm job " + id + " was requeued (BeginTime)");
    assertThat(slurm.job(id).map(SlurmJob::state))
        .as("the requeued placeholder must not come back for a pod that is gone")
        .contains(JobState.CANCELLED);
  }

  @Test
  void aCopyOfAPlaceholdersCommentUnderAnotherSlurmUserIsIgnoredNeverCancelled() {
    Pod p = pod("llm-0", "uid-1", Map.of());
    long id = submitted(p);
    slurm.allocate(id, List.of("gpu-node-1"));
    cache.pollOnce();
    p.getSpec().setNodeName("gpu-node-1");
    String comment = slurm.job(id).orElseThrow().comment();
    // any Slurm user can read the comment (squeue -o %k) and submit a held job with a copy
    long impostor = slurm.addJobAs("mallory", comment);
    cache.pollOnce();
    lifecycle.reconcileAll();
    assertThat(cache.jobFor("uid-1").map(SlurmJob::id)).contains(id);
    assertThat(actions).noneMatch(a -> a.startsWith("evict"));
    assertThat(slurm.job(impostor).map(SlurmJob::state))
        .as("not ours to cancel")
        .contains(JobState.PENDING);
    assertThat(cache.impostors()).isEqualTo(1);
    // the real placeholder ends: the pod goes, and the copy still is not taken for its job
    slurm.end(id, JobState.CANCELLED);
    cache.pollOnce();
    assertThat(actions).anyMatch(a -> a.startsWith("evict serving/llm-0: Slurm job " + id));
    assertThat(slurm.job(impostor).map(SlurmJob::state)).contains(JobState.PENDING);
  }

  @Test
  void resubmitsForAPendingPodWhosePlaceholderWasPreempted() {
    Pod p = pod("llm-0", "uid-1", Map.of());
    long id = submitted(p);
    slurm.allocate(id, List.of("gpu-node-1"));
    cache.pollOnce();
    slurm.end(id, JobState.PREEMPTED);
    cache.pollOnce();
    assertThat(slurm.submissions()).hasSize(2);
    assertThat(actions).noneMatch(a -> a.startsWith("evict"));
  }

  @Test
  void cancelsAPlaceholderWhosePodNoLongerExists() {
    Pod p = pod("llm-0", "uid-1", Map.of());
    long id = submitted(p);
    cache.pollOnce();
    pods.clear();
    slurm.allocate(id, List.of("gpu-node-0"));
    cache.pollOnce();
    assertThat(slurm.job(id).map(SlurmJob::state)).contains(JobState.CANCELLED);
  }

  @Test
  void attributesASlurmPreemptionToThePodChargesTheBudgetAndCountsIt() {
    long training = requeueTrainingAndStartPlaceholder("gpu-node-1", "gpu-node-1");
    assertThat(actions)
        .anySatisfy(
            a ->
                assertThat(a)
                    .startsWith(
                        "event PreemptedSlurmJob: Slurm preempted job "
                            + training
                            + " (train-3, partition training, tier training"));
    assertThat(
            meters
                .get("kse.preemptions")
                .tag("tier", "inference")
                .tag("victim_tier", "training")
                .counter()
                .count())
        .isEqualTo(1.0);
    assertThat(meters.get("kse.pod.allocation").timer().count()).isEqualTo(1);
    assertThat(meters.get("kse.placeholders").tag("state", "Submitted").gauge().value())
        .isEqualTo(1.0);
  }

  @Test
  void aTrainingJobEndingOnAnotherNodeIsNotAPreemption() {
    requeueTrainingAndStartPlaceholder("gpu-node-0", "gpu-node-1");
    assertThat(actions).noneMatch(a -> a.startsWith("event PreemptedSlurmJob"));
    assertThat(meters.find("kse.preemptions").counter()).isNull();
  }

  @Test
  void aReplicaThatIsNotTheWriterNeverActsAndTheNewWriterCatchesUp() {
    writer.set(false);
    Pod p = pod("llm-0", "uid-1", Map.of());
    lifecycle.onPod(p);
    lifecycle.enqueue(PlacementReconciler.ref(p));
    assertThat(slurm.submissions()).isEmpty();
    writer.set(true);
    lifecycle.takeOver();
    assertThat(slurm.submissions()).hasSize(1);
  }

  @Test
  void aTerminalPodReleasesItsPlaceholder() {
    Pod p = pod("llm-0", "uid-1", Map.of());
    long id = submitted(p);
    cache.pollOnce();
    p.getStatus().setPhase("Succeeded");
    lifecycle.onPod(p);
    assertThat(slurm.job(id).map(SlurmJob::state)).contains(JobState.CANCELLED);
  }

  // ---- the sequences of the reconciler issue: each converges whatever was seen in between ----

  /** A pod bound where Slurm allocated its job; returns the job id. */
  long boundOn(Pod p, String node) {
    long id = submitted(p);
    slurm.allocate(id, List.of(node));
    cache.pollOnce();
    p.getSpec().setNodeName(node);
    lifecycle.onPod(p);
    actions.clear();
    return id;
  }

  @Test
  void aBoundPodIsEvictedWhenItsJobEndsEvenIfOnlyCompletingWasSeenBefore() {
    // 1: a poll caught COMPLETING, the next CANCELLED: no single RUNNING -> ended change
    Pod p = pod("llm-0", "uid-1", Map.of());
    long id = boundOn(p, "gpu-node-1");
    slurm.end(id, JobState.COMPLETING);
    cache.pollOnce();
    assertThat(actions)
        .anyMatch(a -> a.startsWith("evict serving/llm-0: Slurm job " + id + " is COMPLETING"));
    actions.clear();
    slurm.end(id, JobState.CANCELLED);
    cache.pollOnce();
    clock.advance(Duration.ofSeconds(11)); // the pod is still there after the eviction: again
    lifecycle.reconcileAll();
    assertThat(actions).contains("evict serving/llm-0: Slurm job " + id + " ended (CANCELLED)");
  }

  @Test
  void aJobThatEndedWhileNoWriterWatchedIsNoticedByTheNextWriter() {
    // 2: restart or fail-over: a fresh reconciler knows nothing but what is true now
    Pod p = pod("llm-0", "uid-1", Map.of());
    long id = boundOn(p, "gpu-node-1");
    writer.set(false);
    slurm.end(id, JobState.TIMEOUT);
    cache.pollOnce();
    slurm.purge(id);
    cache.pollOnce();
    cache.pollOnce(); // gone from two full listings
    assertThat(actions).noneMatch(a -> a.startsWith("evict"));
    writer.set(true);
    PlacementReconciler fresh = reconciler(new PlaceholderRegistry());
    fresh.takeOver();
    assertThat(actions).contains("evict serving/llm-0: no Slurm job holds gpu-node-1 for this pod");
  }

  @Test
  void anEvictionRefusedByADisruptionBudgetIsRetriedThenOverridden() {
    // 3: HTTP 429 was logged as evicted and never retried
    Pod p = pod("llm-0", "uid-1", Map.of());
    long id = boundOn(p, "gpu-node-1");
    evictAnswer.put("uid-1", PodActions.EvictResult.BLOCKED_BY_PDB);
    slurm.end(id, JobState.PREEMPTED);
    cache.pollOnce();
    assertThat(actions.stream().filter(a -> a.startsWith("evict"))).hasSize(1);
    assertThat(actions)
        .anyMatch(
            a ->
                a.startsWith(
                    "event EvictionBlocked: a PodDisruptionBudget refused the eviction (attempt 1)"));
    lifecycle.reconcileAll(); // inside the backoff: nothing
    assertThat(actions.stream().filter(a -> a.startsWith("evict"))).hasSize(1);
    clock.advance(Duration.ofSeconds(2));
    lifecycle.reconcileAll();
    assertThat(actions.stream().filter(a -> a.startsWith("evict"))).hasSize(2);
    assertThat(meters.get("kse.evictions").tag("result", "blocked_by_pdb").counter().count())
        .isEqualTo(2);
    assertThat(actions).doesNotContain("delete serving/llm-0");
    for (int i = 0; i < 10; i++) {
      clock.advance(Duration.ofSeconds(30));
      lifecycle.reconcileAll();
    }
    assertThat(actions).contains("delete serving/llm-0");
  }

  @Test
  void aPendingPodWhoseJobIsCancelledFromOutsideGetsANewOneAndIsTold() {
    // 4: an admin's scancel; the gated pod is never filtered, so only the reconciler can notice
    Pod p = pod("llm-0", "uid-1", Map.of());
    long id = submitted(p);
    cache.pollOnce();
    slurm.end(id, JobState.CANCELLED);
    cache.pollOnce();
    assertThat(slurm.submissions()).hasSize(2);
    assertThat(actions)
        .contains(
            "event SlurmJobEnded: Slurm job "
                + id
                + " ended (CANCELLED) before the pod was bound; submitting a new placeholder");
  }

  @Test
  void aJobAllocatedOnACordonedNodeIsReplaced() {
    // 5: the pod can never bind there; the job held its GPUs for as long as the drain lasted
    Pod p = pod("llm-0", "uid-1", Map.of());
    long id = submitted(p);
    nodes.put("gpu-node-1", new KubeNodes.KubeNode("gpu-node-1", true, Optional.empty()));
    slurm.allocate(id, List.of("gpu-node-1"));
    cache.pollOnce();
    assertThat(actions).noneMatch(a -> a.startsWith("wake"));
    assertThat(actions)
        .anyMatch(
            a ->
                a.startsWith(
                    "event AllocatedNodeUnusable: Slurm job "
                        + id
                        + " was allocated a node the pod cannot go to now (gpu-node-1 is cordoned)"));
    assertThat(slurm.job(id).map(SlurmJob::state)).contains(JobState.CANCELLED);
    cache.pollOnce();
    assertThat(slurm.submissions()).as("a new placeholder").hasSize(2);
  }

  @Test
  void aPendingPodIsToldWhyItWaitsOnlyWhenTheReasonChanges() {
    // 7: with the scheduling gate kube-scheduler never calls filter, so the pod says it itself
    Pod p = pod("llm-0", "uid-1", Map.of());
    long id = submitted(p);
    slurm.pend(id, "Resources");
    cache.pollOnce();
    clock.advance(PlacementReconciler.PENDING_QUIET.plusMillis(100));
    lifecycle.reconcileAll();
    lifecycle.reconcileAll();
    assertThat(actions.stream().filter(a -> a.startsWith("condition")))
        .containsExactly(
            "condition false SlurmPending: waiting for Slurm job " + id + " (Resources)");
    slurm.pend(id, "Priority");
    cache.pollOnce();
    slurm.allocate(id, List.of("gpu-node-0"));
    cache.pollOnce();
    assertThat(actions.stream().filter(a -> a.startsWith("condition")))
        .containsExactly(
            "condition false SlurmPending: waiting for Slurm job " + id + " (Resources)",
            "condition false SlurmPending: waiting for Slurm job " + id + " (Priority)");
    assertThat(actions).contains("wake serving/llm-0 -> gpu-node-0");
  }

  @Test
  void aPlaceholderPendingOnlyAMomentCostsThePodNoConditionAndNoEvent() {
    // issue 16: each pod of a burst got a SlurmPending condition and Event before slurmctld's next
    // pass started its placeholder a few hundred ms later: API server CPU the burst waited for
    Pod p = pod("llm-0", "uid-1", Map.of());
    long id = submitted(p);
    slurm.pend(id, "None");
    cache.pollOnce();
    lifecycle.reconcileAll();
    slurm.pend(id, "Resources");
    cache.pollOnce();
    lifecycle.reconcileAll();
    slurm.allocate(id, List.of("gpu-node-1"));
    cache.pollOnce();
    lifecycle.reconcileAll();
    assertThat(actions).noneMatch(a -> a.contains("waiting for Slurm job"));
    assertThat(actions).contains("wake serving/llm-0 -> gpu-node-1");
  }

  @Test
  void aPodStuckTerminatingKeepsItsJob() {
    Pod p = pod("llm-0", "uid-1", Map.of());
    long id = boundOn(p, "gpu-node-1");
    p.getMetadata().setDeletionTimestamp(clock.instant().toString());
    lifecycle.onPod(p);
    lifecycle.reconcileAll();
    assertThat(slurm.job(id).map(SlurmJob::state)).contains(JobState.RUNNING);
    assertThat(actions).noneMatch(a -> a.startsWith("event PlaceholderHeldForTerminatingPod"));
    clock.advance(PlacementReconciler.STUCK_TERMINATING.plusSeconds(1));
    lifecycle.reconcileAll();
    lifecycle.reconcileAll();
    assertThat(slurm.job(id).map(SlurmJob::state)).contains(JobState.RUNNING);
    assertThat(actions.stream().filter(a -> a.startsWith("event PlaceholderHeldForTerminatingPod")))
        .as("said once, never a silent release")
        .hasSize(1);
    assertThat(meters.get("kse.placeholders.held.for.terminating.pods").gauge().value())
        .isEqualTo(1.0);
    pods.remove("serving/llm-0");
    lifecycle.onPodDeleted(p);
    assertThat(slurm.job(id).map(SlurmJob::state)).contains(JobState.CANCELLED);
    assertThat(meters.get("kse.placeholders.held.for.terminating.pods").gauge().value())
        .isEqualTo(0.0);
  }

  /**
   * Slurm → pod: Slurm chooses a bound pod's placeholder for preemption. The pod is evicted, and
   * the job — which holds the node within its grace time — is cancelled only once the pod is gone.
   */
  @Test
  void aPreemptedPlaceholderIsReleasedOnlyAfterItsPodIsGone() {
    Pod p = pod("llm-0", "uid-1", Map.of());
    long id = boundOn(p, "gpu-node-1");
    slurm.preempt(id);
    cache.pollOnce();
    assertThat(actions)
        .anySatisfy(a -> assertThat(a).startsWith("event SlurmPreemptingPlaceholder: Slurm chose"))
        .anySatisfy(a -> assertThat(a).startsWith("evict serving/llm-0"));
    assertThat(slurm.job(id).map(SlurmJob::state)).contains(JobState.RUNNING);
    p.getMetadata().setDeletionTimestamp(clock.instant().plusSeconds(30).toString());
    lifecycle.onPod(p);
    lifecycle.reconcileAll();
    assertThat(slurm.job(id).map(SlurmJob::state))
        .as("the pod's containers may still run")
        .contains(JobState.RUNNING);
    pods.remove("serving/llm-0");
    lifecycle.onPodDeleted(p);
    assertThat(slurm.job(id).map(SlurmJob::state)).contains(JobState.CANCELLED);
  }

  @Test
  void aVictimRunningBeforeThisReplicaBecameTheWriterIsStillCharged() {
    // 6: a new writer never saw the victim RUNNING, so its preemption was not charged at all
    writer.set(false);
    long training = slurm.addForeignJob("train-3", JobState.RUNNING, List.of("gpu-node-1"));
    cache.pollOnce();
    writer.set(true);
    long id = submitted(pod("llm-0", "uid-1", Map.of()));
    cache.pollOnce();
    slurm.requeue(training);
    slurm.allocate(id, List.of("gpu-node-1"));
    cache.pollOnce();
    assertThat(actions)
        .anySatisfy(
            a ->
                assertThat(a)
                    .startsWith("event PreemptedSlurmJob: Slurm preempted job " + training));
  }

  /** Multi-node groups: one job for all members, member i on the job's i-th node. */
  @org.junit.jupiter.api.Nested
  class Groups {
    static final String GROUP_KEY = "group:serving/kse/llm";

    Pod member(String name, String uid, int index) {
      return pod(
          name,
          uid,
          Map.of(
              GroupMembership.GROUP, "llm",
              GroupMembership.GROUP_SIZE, "3",
              GroupMembership.GROUP_INDEX, Integer.toString(index)));
    }

    Pod bind(Pod p, String node) {
      Pod b =
          new io.fabric8.kubernetes.api.model.PodBuilder(p)
              .editSpec()
              .withNodeName(node)
              .endSpec()
              .build();
      pods.put("serving/" + p.getMetadata().getName(), b);
      return b;
    }

    void delete(Pod p) {
      pods.remove("serving/" + p.getMetadata().getName());
      lifecycle.onPodDeleted(p);
    }

    long jobId() {
      return ((PlaceholderState.Submitted) registry.get(GROUP_KEY).orElseThrow()).jobId();
    }

    @Test
    void oneJobForTheWholeGroupSubmittedOnlyOnceEveryMemberExists() {
      lifecycle.onPod(member("llm-0", "u0", 0));
      lifecycle.onPod(member("llm-1", "u1", 1));
      assertThat(slurm.submissions()).as("2 of 3 members").isEmpty();
      lifecycle.onPod(member("llm-2", "u2", 2));
      assertThat(slurm.submissions()).hasSize(1);
      JobSubmission s = slurm.submissions().get(0);
      assertThat(s.nodes()).isEqualTo(3);
      assertThat(s.gresPerNode()).contains("gpu:h100:4");
      assertThat(s.tag().key()).isEqualTo(GROUP_KEY);
      assertThat(s.tag().name()).as("the leader").isEqualTo("llm-0");
      lifecycle.reconcileAll();
      assertThat(slurm.submissions()).hasSize(1);
    }

    @Test
    void noMemberIsWokenBeforeTheWholeJobIsAllocatedThenEachGoesToItsOwnNode() {
      lifecycle.onPod(member("llm-2", "u2", 2));
      lifecycle.onPod(member("llm-0", "u0", 0));
      lifecycle.onPod(member("llm-1", "u1", 1));
      long id = jobId();
      cache.pollOnce();
      assertThat(actions).noneMatch(a -> a.startsWith("wake"));
      slurm.allocate(id, List.of("gpu-node-3", "gpu-node-1", "gpu-node-2"));
      cache.pollOnce();
      assertThat(actions)
          .contains(
              "wake serving/llm-0 -> gpu-node-3",
              "wake serving/llm-1 -> gpu-node-1",
              "wake serving/llm-2 -> gpu-node-2");
    }

    @Test
    void anIncompleteGroupHoldsNoJobAndIsToldSoOnlyAfterTheWait() {
      lifecycle.onPod(member("llm-0", "u0", 0));
      lifecycle.onPod(member("llm-1", "u1", 1));
      assertThat(actions).isEmpty();
      clock.advance(GROUP_WAIT.plusSeconds(1));
      lifecycle.reconcileAll();
      assertThat(slurm.submissions()).isEmpty();
      assertThat(actions)
          .contains(
              "event WaitingForSlurm: group kse/llm has 2 of its 3 members; its Slurm placeholder is"
                  + " submitted once all exist, and holds no node until then");
    }

    @Test
    void aRecreatedMemberGoesBackToItsNodeOfTheStillRunningJob() {
      Pod l = member("llm-0", "u0", 0);
      Pod w1 = member("llm-1", "u1", 1);
      Pod w2 = member("llm-2", "u2", 2);
      List.of(l, w1, w2).forEach(lifecycle::onPod);
      long id = jobId();
      slurm.allocate(id, List.of("gpu-node-1", "gpu-node-2", "gpu-node-3"));
      cache.pollOnce();
      bind(l, "gpu-node-1");
      bind(w1, "gpu-node-2");
      bind(w2, "gpu-node-3");
      lifecycle.reconcileAll();
      delete(w1);
      assertThat(slurm.job(id).map(SlurmJob::state))
          .as("other members live")
          .contains(JobState.RUNNING);
      actions.clear();
      lifecycle.onPod(member("llm-1", "u1-new", 1));
      assertThat(actions).contains("wake serving/llm-1 -> gpu-node-2");
      assertThat(slurm.submissions()).hasSize(1);
    }

    /** A member of group {@code llm} of {@code size}, indexed by name, asking {@code gpus}. */
    Pod byName(String name, String uid, int size, int gpus) {
      Pod p =
          io.kse.extender.testing.Pods.pending(
                  name,
                  3,
                  gpus,
                  Map.of(GroupMembership.GROUP, "llm", GroupMembership.GROUP_SIZE, "" + size))
              .editMetadata()
              .withUid(uid)
              .withCreationTimestamp(Instant.now().minusSeconds(2).toString())
              .endMetadata()
              .build();
      pods.put("serving/" + name, p);
      lifecycle.onPod(p);
      return p;
    }

    String nodeOf(Pod p, long job) {
      PodRef ref = PlacementReconciler.ref(p);
      return lifecycle.placementOf(ref).nodeOf(ref, cache.job(job).orElseThrow()).orElse("none");
    }

    /** Issue 26 #2: a member's index is its for the life of the job, whoever else goes. */
    @Test
    void aMemberIndexedByNameKeepsItsNodeWhenAnotherIsDeletedAndTheNewcomerGetsTheFreeOne() {
      Pod m0 = byName("llm-a", "u0", 4, 4);
      Pod m1 = byName("llm-b", "u1", 4, 4);
      Pod m2 = byName("llm-c", "u2", 4, 4);
      Pod m3 = byName("llm-d", "u3", 4, 4);
      long id = jobId();
      slurm.allocate(id, List.of("gpu-node-1", "gpu-node-2", "gpu-node-3", "gpu-node-4"));
      cache.pollOnce();
      assertThat(actions).contains("wake serving/llm-c -> gpu-node-3");
      // one member deleted before any bind: the others keep the nodes they were sent to
      delete(m1);
      assertThat(List.of(nodeOf(m0, id), nodeOf(m2, id), nodeOf(m3, id)))
          .containsExactly("gpu-node-1", "gpu-node-3", "gpu-node-4");
      bind(m2, "gpu-node-3");
      actions.clear();
      Pod again = byName("llm-e", "u4", 4, 4);
      assertThat(actions).contains("wake serving/llm-e -> gpu-node-2");
      assertThat(nodeOf(again, id)).isEqualTo("gpu-node-2");
      assertThat(nodeOf(m3, id)).isEqualTo("gpu-node-4");
      assertThat(slurm.submissions()).hasSize(1);
    }

    /** Issue 26 #1: never bound on fewer GPUs than it asks. */
    @Test
    void aMemberRecreatedAskingMoreGpusWaitsWhileOthersRunThenTheJobIsReplaced() {
      Pod a = byName("llm-a", "u0", 2, 4);
      Pod b = byName("llm-b", "u1", 2, 4);
      long id = jobId();
      slurm.allocate(id, List.of("gpu-node-1", "gpu-node-2"));
      cache.pollOnce();
      bind(a, "gpu-node-1");
      bind(b, "gpu-node-2");
      delete(b);
      actions.clear();
      Pod bigger = byName("llm-b", "u1-new", 2, 8);
      assertThat(nodeOf(bigger, id)).as("the job holds 4 GPUs per node").isEqualTo("none");
      assertThat(actions).noneMatch(x -> x.startsWith("wake"));
      assertThat(actions)
          .contains(
              "condition false ShapeChanged: pod llm-b asks 8 GPUs per node, and Slurm job "
                  + id
                  + " holds 4 on each of its nodes; a placeholder of the new shape follows once"
                  + " the running members have stopped");
      assertThat(slurm.job(id).map(SlurmJob::state)).contains(JobState.RUNNING);
      // the running member goes too (its controller recreates the group): the job is replaced
      delete(a);
      byName("llm-a", "u0-new", 2, 8);
      assertThat(slurm.job(id).map(SlurmJob::state)).contains(JobState.CANCELLED);
      assertThat(actions).anyMatch(x -> x.startsWith("event PlacementShapeChanged: pod llm-"));
      cache.pollOnce();
      assertThat(slurm.submissions()).hasSize(2);
      assertThat(slurm.submissions().get(1).gresPerNode()).contains("gpu:h100:8");
      assertThat(slurm.submissions().get(1).nodes()).isEqualTo(2);
    }

    /** Issue 26 #3: a job of a shape that no longer stands never runs for nobody. */
    @Test
    void aGroupMadeInvalidWhileItsJobPendsHasTheJobCancelledAndGetsOneOfItsNewShape() {
      Pod a = byName("llm-a", "u0", 3, 4);
      byName("llm-b", "u1", 3, 4);
      byName("llm-c", "u2", 3, 4);
      long id = jobId();
      cache.pollOnce();
      byName("llm-b", "u1", 2, 4); // one member's size changed: the members disagree
      assertThat(slurm.job(id).map(SlurmJob::state)).contains(JobState.CANCELLED);
      assertThat(actions)
          .anyMatch(x -> x.startsWith("condition false GroupInvalid: group kse/llm"));
      cache.pollOnce();
      // made consistent again at size 2
      delete(pods.get("serving/llm-c"));
      byName("llm-a", "u0", 2, 4);
      cache.pollOnce();
      lifecycle.reconcileAll();
      assertThat(slurm.submissions()).hasSize(2);
      assertThat(slurm.submissions().get(1).nodes()).isEqualTo(2);
      long second = jobId();
      slurm.allocate(second, List.of("gpu-node-1", "gpu-node-2"));
      cache.pollOnce();
      assertThat(nodeOf(a, second)).isEqualTo("gpu-node-1");
    }

    /** A group whose size changed while its job pends gets a job of the new size. */
    @Test
    void aPendingJobOfTheOldSizeIsReplaced() {
      byName("llm-a", "u0", 2, 4);
      byName("llm-b", "u1", 2, 4);
      long id = jobId();
      cache.pollOnce();
      byName("llm-a", "u0", 3, 4);
      byName("llm-b", "u1", 3, 4);
      byName("llm-c", "u2", 3, 4);
      assertThat(slurm.job(id).map(SlurmJob::state)).contains(JobState.CANCELLED);
      cache.pollOnce();
      lifecycle.reconcileAll();
      assertThat(slurm.submissions()).hasSize(2);
      assertThat(slurm.submissions().get(1).nodes()).isEqualTo(3);
    }

    @Test
    void theWholeGroupGoneCancelsItsJob() {
      Pod l = member("llm-0", "u0", 0);
      Pod w1 = member("llm-1", "u1", 1);
      Pod w2 = member("llm-2", "u2", 2);
      List.of(l, w1, w2).forEach(lifecycle::onPod);
      long id = jobId();
      cache.pollOnce();
      delete(l);
      delete(w1);
      assertThat(slurm.job(id).map(SlurmJob::state)).contains(JobState.PENDING);
      delete(w2);
      assertThat(slurm.job(id).map(SlurmJob::state)).contains(JobState.CANCELLED);
    }

    @Test
    void aPreemptedGroupJobEvictsEveryBoundMember() {
      Pod l = member("llm-0", "u0", 0);
      Pod w1 = member("llm-1", "u1", 1);
      Pod w2 = member("llm-2", "u2", 2);
      List.of(l, w1, w2).forEach(lifecycle::onPod);
      long id = jobId();
      slurm.allocate(id, List.of("gpu-node-1", "gpu-node-2", "gpu-node-3"));
      cache.pollOnce();
      bind(l, "gpu-node-1");
      bind(w1, "gpu-node-2");
      bind(w2, "gpu-node-3");
      slurm.end(id, JobState.PREEMPTED);
      cache.pollOnce();
      lifecycle.reconcileAll();
      assertThat(actions.stream().filter(a -> a.startsWith("evict")).toList())
          .hasSize(3)
          .allMatch(a -> a.contains("Slurm job " + id + " ended (PREEMPTED)"));
    }

    @Test
    void afterARestartTheGroupIsRebuiltFromSlurmAloneWithoutASecondJob() {
      writer.set(false);
      List.of(member("llm-0", "u0", 0), member("llm-1", "u1", 1), member("llm-2", "u2", 2))
          .forEach(lifecycle::onPod);
      long id =
          slurm.submit(
              JobSubmission.builder(PlaceholderTag.group("serving", "llm-0", "u0", "kse/llm", 3))
                  .nodes(3)
                  .build());
      slurm.allocate(id, List.of("gpu-node-1", "gpu-node-2", "gpu-node-3"));
      cache.pollOnce();
      writer.set(true);
      lifecycle.takeOver();
      assertThat(slurm.submissions()).hasSize(1);
      assertThat(actions)
          .contains(
              "wake serving/llm-0 -> gpu-node-1",
              "wake serving/llm-1 -> gpu-node-2",
              "wake serving/llm-2 -> gpu-node-3");
    }

    @Test
    void duplicateIndexesAreToldOnEveryMemberAndHoldNoJob() {
      lifecycle.onPod(member("llm-0", "u0", 0));
      lifecycle.onPod(member("llm-1", "u1", 1));
      lifecycle.onPod(member("llm-x", "ux", 1));
      clock.advance(GROUP_WAIT.plusSeconds(1));
      lifecycle.reconcileAll();
      assertThat(slurm.submissions()).isEmpty();
      assertThat(
              actions.stream()
                  .filter(
                      a -> a.startsWith("event WaitingForSlurm: group kse/llm cannot be placed"))
                  .count())
          .isEqualTo(3);
      assertThat(actions).anyMatch(a -> a.contains("index 1 is claimed by llm-1 and llm-x"));
    }

    @Test
    void membersDisagreeingOnTheirTierAreRefusedWithTheReason() {
      lifecycle.onPod(member("llm-0", "u0", 0));
      lifecycle.onPod(member("llm-1", "u1", 1));
      Pod odd =
          new io.fabric8.kubernetes.api.model.PodBuilder(member("llm-2", "u2", 2))
              .editMetadata()
              .addToLabels("kse-test/tier", "training")
              .endMetadata()
              .build();
      pods.put("serving/llm-2", odd);
      lifecycle.onPod(odd);
      assertThat(slurm.submissions()).isEmpty();
      assertThat(actions.stream().filter(a -> a.startsWith("event PlacementRejected")).toList())
          .hasSize(3)
          .allMatch(a -> a.contains("disagree on their tier"));
    }

    @Test
    void aLeaderWorkerSetWithExclusiveTopologyIsSubmittedForItsLeaderAlone() {
      // LWS creates the workers only once the leader is bound when exclusive-topology is set
      lifecycle.onPod(lwsLeader("u0", "nvidia.com/gpu.clique"));
      assertThat(slurm.submissions()).hasSize(1);
      JobSubmission s = slurm.submissions().get(0);
      assertThat(s.nodes()).isEqualTo(2);
      assertThat(s.constraints()).contains("[nvl-0|nvl-1]");
      assertThat(s.tag().key()).isEqualTo("group:serving/lws/llm/0");
    }

    @Test
    void aTopologyKeyThePolicyDoesNotKnowIsRefusedNamingIt() {
      lifecycle.onPod(lwsLeader("u0", "example.com/rack"));
      assertThat(slurm.submissions()).isEmpty();
      assertThat(actions)
          .anyMatch(
              a ->
                  a.startsWith("event PlacementRejected")
                      && a.contains("example.com/rack")
                      && a.contains("cluster.nvlinkDomainTopologyKeys"));
    }

    Pod lwsLeader(String uid, String exclusiveKey) {
      Pod leader =
          new io.fabric8.kubernetes.api.model.PodBuilder(pod("llm-0", uid, Map.of()))
              .editMetadata()
              .addToLabels(GroupMembership.LWS_NAME, "llm")
              .addToLabels(GroupMembership.LWS_GROUP_INDEX, "0")
              .addToLabels(GroupMembership.LWS_WORKER_INDEX, "0")
              .addToAnnotations(GroupMembership.LWS_SIZE, "2")
              .addToAnnotations(GroupMembership.LWS_EXCLUSIVE, exclusiveKey)
              .endMetadata()
              .build();
      pods.put("serving/llm-0", leader);
      return leader;
    }
  }

  /** Several Kubernetes clusters on one Slurm: each acts on its own placeholders only. */
  @org.junit.jupiter.api.Nested
  class SharedSlurm {
    long placeholderOf(PlaceholderTag tag) {
      long id = slurm.submit(JobSubmission.builder(tag).build());
      slurm.allocate(id, List.of("gpu-node-3"));
      cache.pollOnce();
      return id;
    }

    @Test
    void ourSubmissionsNameThisCluster() {
      lifecycle.onPod(pod("llm-0", "uid-1", Map.of()));
      assertThat(slurm.submissions().get(0).tag().cluster()).contains(CLUSTER);
    }

    @Test
    void anotherClustersPlaceholderIsNeverCancelledHereThoughNoPodOfOursStandsForIt() {
      // was: the orphan sweep cancelled any kse:v1 job whose pod this API server lacked
      long id =
          placeholderOf(new PlaceholderTag("serving", "llm-0", "their-uid").inCluster("staging"));
      lifecycle.reconcileAll();
      lifecycle.takeOver();
      assertThat(slurm.job(id).map(SlurmJob::state)).contains(JobState.RUNNING);
      assertThat(cache.jobFor("their-uid")).as("not ours to find").isEmpty();
    }

    @Test
    void ourOwnOrphanIsStillCancelled() {
      long id = placeholderOf(new PlaceholderTag("serving", "gone", "gone-uid").inCluster(CLUSTER));
      lifecycle.reconcileAll();
      assertThat(slurm.job(id).map(SlurmJob::state)).contains(JobState.CANCELLED);
    }

    @Test
    void aPlaceholderOfTheOlderFormIsOursWhenOurPodStandsForIt() {
      long mine = placeholderOf(new PlaceholderTag("serving", "llm-0", "uid-1"));
      pod("llm-0", "uid-1", Map.of());
      long unknown = placeholderOf(new PlaceholderTag("serving", "other", "other-uid"));
      lifecycle.reconcileAll();
      assertThat(actions).contains("wake serving/llm-0 -> gpu-node-3");
      assertThat(slurm.job(mine).map(SlurmJob::state)).contains(JobState.RUNNING);
      assertThat(slurm.job(unknown).map(SlurmJob::state))
          .as("no cluster named, no pod of ours: left alone")
          .contains(JobState.RUNNING);
    }
  }
}
