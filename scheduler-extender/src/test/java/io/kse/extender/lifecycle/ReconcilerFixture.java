package io.kse.extender.lifecycle;

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

/**
 * What every reconciler test shares: a fake Slurm and its cache, pods as the informer has them,
 * Kubernetes nodes, a clock, and the reconciler wired as {@code ExtenderService} wires it, whose
 * calls are recorded. Passes and workers run on the calling thread, so a test sees their effects at
 * once.
 */
abstract class ReconcilerFixture {
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

  final MutableClock clock = new MutableClock(Instant.now());
  final FakeSlurm fake = new FakeSlurm(clock);
  final FakeSlurmClient slurm = fake.client;
  final SlurmStateCache cache = fake.cache;
  final PlaceholderRegistry registry = new PlaceholderRegistry();
  final SimpleMeterRegistry meters = new SimpleMeterRegistry();
  final io.kse.extender.metrics.ExtenderMetrics metrics =
      new io.kse.extender.metrics.ExtenderMetrics(meters);
  final Map<String, Pod> pods = new ConcurrentHashMap<>();

  /** Every call the reconciler made, as a line: what most assertions read. */
  final List<String> actions = new ArrayList<>();

  /** Every call the reconciler made, typed: what absences are checked on. */
  final List<Recorded> recorded = new ArrayList<>();

  final java.util.concurrent.atomic.AtomicBoolean writer =
      new java.util.concurrent.atomic.AtomicBoolean(true);
  final Map<String, KubeNodes.KubeNode> nodes = new ConcurrentHashMap<>();
  final NodeNames nodeNames = new NodeNames();
  final Map<String, PodActions.EvictResult> evictAnswer = new ConcurrentHashMap<>();

  /** The Workload API's PodGroups by namespace/name (none unless a test adds one). */
  final Map<String, GroupMembership.PodGroupSpec> podGroups = new ConcurrentHashMap<>();

  /** The informer's pods, from {@link #pods}. */
  final PodSource podSource =
      new PodSource() {
        @Override
        public Optional<Pod> pod(String ns, String name) {
          return Optional.ofNullable(pods.get(ns + "/" + name));
        }

        @Override
        public List<Pod> pods() {
          return List.copyOf(pods.values());
        }
      };

  /** Records every call, typed ({@link #recorded}) and as a line ({@link #actions}). */
  final PodActions podActions =
      new PodActions() {
        @Override
        public void event(PodRef pod, EventReason reason, String message) {
          record(new Recorded.Event(pod, reason, message));
        }

        @Override
        public boolean wake(PodRef pod, String node, long jobId, WakeUp how) {
          record(new Recorded.Wake(pod, node, jobId, how));
          return true;
        }

        @Override
        public void ungate(PodRef pod) {
          record(new Recorded.Ungate(pod));
        }

        @Override
        public EvictResult evict(PodRef pod, String reason) {
          record(new Recorded.Evict(pod, reason));
          return evictAnswer.getOrDefault(pod.uid(), EvictResult.EVICTED);
        }

        @Override
        public boolean delete(PodRef pod, String reason) {
          record(new Recorded.Delete(pod));
          return true;
        }

        @Override
        public void condition(PodRef pod, boolean allocated, String reason, String message) {
          record(new Recorded.Condition(pod, allocated, reason, message));
        }
      };

  void record(Recorded r) {
    recorded.add(r);
    actions.add(r.toString());
  }

  /** Every recorded call of this kind. */
  <T extends Recorded> List<T> recorded(Class<T> kind) {
    return recorded.stream().filter(kind::isInstance).map(kind::cast).toList();
  }

  /** Every Event posted with this reason. */
  List<Recorded.Event> events(EventReason reason) {
    return recorded(Recorded.Event.class).stream().filter(e -> e.reason() == reason).toList();
  }

  void clearRecorded() {
    recorded.clear();
    actions.clear();
  }

  /** Wired as {@link #lifecycle} is. */
  PlacementReconciler reconciler(PlaceholderRegistry reg) {
    return reconciler(reg, nominateFromNodes());
  }

  /**
   * KSE_NOMINATE_FROM_NODES of {@link #lifecycle}: 0, every woken pod nominated too, as before the
   * setting (called while the fixture is built: return a constant).
   */
  int nominateFromNodes() {
    return 0;
  }

  /** Wired with the Kubernetes node count from which woken pods are nominated too. */
  PlacementReconciler reconciler(PlaceholderRegistry reg, int nominateFromNodes) {
    return PlacementReconciler.wire(
        new PlacementReconciler.Views(
            cache,
            podSource,
            (ns, name) -> Optional.ofNullable(podGroups.get(ns + "/" + name)),
            nodeNames,
            Optional.of(new StaticNodes(nodes)),
            reg,
            io.kse.extender.k8s.ClusterIdentity.of(CLUSTER),
            writer::get),
        new PlacementReconciler.Calls(
            cache.tracking(slurm),
            cache,
            podActions,
            io.kse.extender.dra.GpuClaims.none(),
            new DirectExecutor(),
            new DirectExecutor(),
            metrics,
            clock),
        new PlacementReconciler.Settings(
            () -> new PlacementPolicy(PolicyParser.parse(POLICY, "test")),
            new PreemptionLedger(),
            "/tmp",
            JobSubmission.Shape.BATCH,
            Duration.ofSeconds(60),
            GROUP_WAIT,
            nominateFromNodes,
            PENDING_QUIET));
  }

  final PlacementReconciler lifecycle = reconciler(registry);

  {
    cache.addJobListener(lifecycle::onJobChange);
    // as ExtenderService does once the identity is known
    cache.owner(
        new io.kse.slurm.PlaceholderOwner(Optional.of(CLUSTER), Optional.of(FakeSlurmClient.USER)));
    cache.pollOnce(); // synced, as ExtenderService waits to be before anything acts
  }

  static final Duration GROUP_WAIT = Duration.ofSeconds(30);

  /**
   * KSE_EVENT_QUIET_MS: how long a placeholder pends before its pods are told why they wait. The
   * fake Slurm, the cache and the reconciler all read {@link #clock}.
   */
  static final Duration PENDING_QUIET = Duration.ofSeconds(5);

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
    cache.endedElsewhere(training, List.of(trainingNode)); // Slurm's end hook
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
}
