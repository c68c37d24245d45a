package io.kse.extender.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.Pod;
import io.kse.extender.k8s.ClusterIdentity;
import io.kse.extender.k8s.KubeNodes;
import io.kse.extender.k8s.NodeNames;
import io.kse.extender.k8s.PodRef;
import io.kse.extender.testing.FakeSlurm;
import io.kse.extender.testing.Pods;
import io.kse.policy.PlacementPolicy;
import io.kse.policy.PolicyParser;
import io.kse.policy.PreemptionLedger;
import io.kse.slurm.JobSubmission;
import io.kse.slurm.SlurmRejectedException;
import io.kse.slurm.testing.FakeSlurmClient;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/** The submitter on its own: what is a refusal (final), an outage (retried), and a bug. */
class SubmitterTest {
  final FakeSlurm fake = new FakeSlurm();
  final PlaceholderRegistry registry = new PlaceholderRegistry();
  final io.kse.slurm.testing.MutableClock clock =
      new io.kse.slurm.testing.MutableClock(java.time.Instant.parse("2026-11-25T12:00:00Z"));
  final RecordingPodActions actions = new RecordingPodActions();
  final List<String> said = actions.calls;

  Submitter submitter(Supplier<PlacementPolicy> policy) {
    PlacementReconciler.Views views =
        new PlacementReconciler.Views(
            fake.cache,
            io.kse.extender.k8s.PodSource.none(),
            (ns, name) -> Optional.empty(),
            nodeNames,
            Optional.of(new ReconcilerFixture.StaticNodes(nodes)),
            registry,
            ClusterIdentity.of("c1"),
            () -> true);
    PlacementReconciler.Calls calls =
        new PlacementReconciler.Calls(
            fake.client,
            fake.cache,
            actions,
            io.kse.extender.dra.GpuClaims.none(),
            Runnable::run,
            Runnable::run,
            new io.kse.extender.metrics.ExtenderMetrics(
                new io.micrometer.core.instrument.simple.SimpleMeterRegistry()),
            clock);
    PlacementReconciler.Settings settings =
        new PlacementReconciler.Settings(
            policy,
            new PreemptionLedger(),
            "/tmp",
            JobSubmission.Shape.BATCH,
            Duration.ofSeconds(60),
            Duration.ofSeconds(30),
            0,
            Duration.ofSeconds(5));
    return new Submitter(
        views,
        calls,
        settings,
        new NodeStanding(fake.cache, nodeNames, views.kubeNodes(), policy),
        new PodFactsReader(io.kse.extender.dra.GpuClaims.none()),
        new io.kse.slurm.SubmissionOrder(fake.cache::snapshot, clock));
  }

  final NodeNames nodeNames = new NodeNames();

  /** Kubernetes nodes; a test cordons some (the Slurm node of the same name must be avoided). */
  final Map<String, KubeNodes.KubeNode> nodes = new java.util.HashMap<>();

  void cordon(String... names) {
    for (String n : names) {
      nodes.put(n, new KubeNodes.KubeNode(n, true, Optional.empty()));
    }
  }

  static PlacementPolicy policy() {
    return new PlacementPolicy(
        PolicyParser.parse(
            """
            apiVersion: kse.io/v1alpha1
            kind: PlacementPolicy
            cluster: {preemptMode: partition, gpuGres: gpu}
            defaultTier: inference
            tiers:
              - name: inference
                slurm: {partition: inference}
            """,
            "test"));
  }

  final Pod pod =
      new io.fabric8.kubernetes.api.model.PodBuilder(Pods.pending("llm-0", 2, 4, Map.of()).build())
          .editMetadata()
          .withUid("u-1")
          .endMetadata()
          .build();
  final Placement placement = Placement.of(PodRef.of(pod));

  @Test
  void aSubmittedPlaceholderIsRecordedWithItsJobAndTier() {
    long id = submitter(SubmitterTest::policy).submit(placement, List.of(pod));
    assertThat(registry.get("u-1"))
        .get()
        .isEqualTo(new PlaceholderState.Submitted(id, "inference", clock.instant()));
    assertThat(fake.client.submissions().get(0).tag().cluster()).contains("c1");
    assertThat(said).anyMatch(s -> s.startsWith("event SlurmJobSubmitted: placeholder submitted"));
  }

  /** A placeholder must never be given a node its pod cannot go to: replaced, it would be again. */
  @Test
  void cordonedOrDrainedNodesAreExcludedFromThePlaceholder() {
    cordon("gpu-node-0", "gpu-node-3");
    submitter(SubmitterTest::policy).submit(placement, List.of(pod));
    assertThat(fake.client.submissions().get(0).excludedNodes())
        .containsExactlyInAnyOrder("gpu-node-0", "gpu-node-3");
  }

  /**
   * slurmrestd 22.05 refuses excluded_nodes: the job goes without (a drain must keep Slurm off).
   */
  @Test
  void onSlurm2205NoExclusionIsSentForItWouldBeRefused() {
    fake.client.speak(io.kse.slurm.ApiVersion.V0038);
    cordon("gpu-node-0");
    submitter(SubmitterTest::policy).submit(placement, List.of(pod));
    assertThat(fake.client.submissions().get(0).excludedNodes()).isEmpty();
  }

  @Test
  void aPodSlurmRefusesIsRejectedForGoodWithSlurmsWords() {
    fake.client.failWith(new SlurmRejectedException("Invalid partition name specified"));
    assertThat(submitter(SubmitterTest::policy).submit(placement, List.of(pod))).isZero();
    assertThat(registry.get("u-1")).get().isInstanceOf(PlaceholderState.Rejected.class);
    assertThat(said).contains("event PlacementRejected: Invalid partition name specified");
  }

  @Test
  void anOutageIsRetriedWithABackoffThatGrows() {
    fake.client.failWith(FakeSlurmClient.outage());
    Submitter s = submitter(SubmitterTest::policy);
    s.submit(placement, List.of(pod));
    PlaceholderState.SubmitFailed first = (PlaceholderState.SubmitFailed) registry.get("u-1").get();
    s.submit(placement, List.of(pod));
    PlaceholderState.SubmitFailed second =
        (PlaceholderState.SubmitFailed) registry.get("u-1").get();
    assertThat(first.attempts()).isEqualTo(1);
    assertThat(Duration.between(clock.instant(), first.retryAt())).isEqualTo(Duration.ofSeconds(2));
    assertThat(Duration.between(clock.instant(), second.retryAt()))
        .isEqualTo(Duration.ofSeconds(4));
  }

  @Test
  void anUnreadablePodIsRejectedNamingWhatIsWrong() {
    Pod nameless =
        new io.fabric8.kubernetes.api.model.PodBuilder(pod)
            .editMetadata()
            .withName("")
            .endMetadata()
            .build();
    submitter(SubmitterTest::policy).submit(placement, List.of(nameless));
    assertThat(registry.get("u-1")).get().isInstanceOf(PlaceholderState.Rejected.class);
    assertThat(said).anyMatch(s -> s.contains("the pod has no metadata.name"));
  }

  /** A bug is not a refusal: it surfaces (the runner logs it and the next pass tries again). */
  @Test
  void anUnexpectedExceptionIsABugNotAPermanentRejection() {
    Supplier<PlacementPolicy> broken =
        () -> {
          throw new IllegalArgumentException("a bug in the policy code");
        };
    assertThatThrownBy(() -> submitter(broken).submit(placement, List.of(pod)))
        .hasMessage("a bug in the policy code");
    assertThat(registry.get("u-1")).isEmpty();
    assertThat(said).noneMatch(s -> s.startsWith("event PlacementRejected"));
  }
}
