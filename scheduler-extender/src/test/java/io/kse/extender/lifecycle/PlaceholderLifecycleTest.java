package io.kse.extender.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.kse.extender.k8s.NodeNames;
import io.kse.extender.k8s.PodActions;
import io.kse.extender.k8s.PodSource;
import io.kse.extender.testing.FakeSlurm;
import io.kse.extender.wire.PodRef;
import io.kse.policy.PlacementPolicy;
import io.kse.policy.PolicyParser;
import io.kse.policy.PreemptionLedger;
import io.kse.slurm.JobState;
import io.kse.slurm.JobSubmission;
import io.kse.slurm.PlaceholderTag;
import io.kse.slurm.SlurmJob;
import io.kse.slurm.cache.SlurmStateCache;
import io.kse.slurm.testing.FakeSlurmClient;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class PlaceholderLifecycleTest {
  static final String POLICY =
      """
      apiVersion: kse.io/v1alpha1
      kind: PlacementPolicy
      cluster: {preemptMode: partition, gpuGres: gpu, gpuType: h100}
      defaultTier: inference
      tiers:
        - name: inference
          slurm: {partition: inference}
          mayPreempt: [training]
        - name: training
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
  final PlaceholderLifecycle lifecycle =
      new PlaceholderLifecycle(
          slurm,
          cache,
          () -> new PlacementPolicy(PolicyParser.parse(POLICY, "test")),
          new PreemptionLedger(),
          registry,
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
            public void event(PodRef pod, boolean warning, String reason, String message) {
              actions.add("event " + reason + ": " + message);
            }

            @Override
            public void wake(PodRef pod, String node, long jobId, boolean gated) {
              actions.add("wake " + pod + " -> " + node);
            }

            @Override
            public void ungate(PodRef pod) {
              actions.add("ungate " + pod);
            }

            @Override
            public void evict(PodRef pod, String reason) {
              actions.add("evict " + pod + ": " + reason);
            }
          },
          new NodeNames(),
          Clock.systemUTC(),
          new DirectExecutor(),
          "/tmp",
          JobSubmission.Shape.BATCH,
          metrics);

  {
    cache.addJobListener(lifecycle::onJobChange);
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
    lifecycle.requestPlaceholder(PlaceholderLifecycle.ref(p));
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
    registry.put(
        "uid-1",
        new PlaceholderState.SubmitFailed("x", java.time.Instant.now().minusSeconds(1), 1));
    lifecycle.onPod(p);
    assertThat(slurm.submissions()).hasSize(1);
  }

  @Test
  void aPlaceholderAllocatedWhileNoWriterWatchedIsAdoptedAndThePodWoken() {
    // found by e2e: after a crash, a pending pod whose job was already running was never woken
    Pod p = pod("llm-0", "uid-1", Map.of());
    long id =
        slurm.submit(
            JobSubmission.builder(new PlaceholderTag("serving", "llm-0", "uid-1")).build());
    slurm.allocate(id, List.of("gpu-node-2"));
    cache.pollOnce();
    actions.clear();
    lifecycle.takeOver();
    assertThat(slurm.submissions()).as("adopted, not submitted again").hasSize(1);
    assertThat(actions).contains("wake serving/llm-0 -> gpu-node-2");
    assertThat(registry.get("uid-1")).get().isInstanceOf(PlaceholderState.Submitted.class);
  }

  @Test
  void aFailedSubmissionIsRetriedByHousekeepingOnceItsBackoffPassed() {
    slurm.failWith(FakeSlurmClient.outage());
    lifecycle.onPod(pod("llm-0", "uid-1", Map.of()));
    slurm.failWith(null);
    assertThat(lifecycle.retryDueSubmissions()).as("inside the backoff").isZero();
    registry.put(
        "uid-1",
        new PlaceholderState.SubmitFailed("x", java.time.Instant.now().minusSeconds(1), 1));
    assertThat(lifecycle.retryDueSubmissions()).isEqualTo(1);
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
    lifecycle.onPodDeleted(p);
    assertThat(slurm.job(id).map(SlurmJob::state)).contains(JobState.CANCELLED);
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
        .contains(
            "evict serving/llm-0: Slurm job " + id + " was preempted and requeued (BeginTime)");
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
    java.util.concurrent.atomic.AtomicBoolean writer =
        new java.util.concurrent.atomic.AtomicBoolean(false);
    lifecycle.writerGate(writer::get);
    Pod p = pod("llm-0", "uid-1", Map.of());
    lifecycle.onPod(p);
    lifecycle.requestPlaceholder(PlaceholderLifecycle.ref(p));
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
}
