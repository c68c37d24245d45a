package io.kse.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.fabric8.kubernetes.api.model.Pod;
import io.kse.slurm.SlurmNode;
import io.kse.slurm.testing.LocalSlurmCluster;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Scenarios 7, 8 and 9: Slurm's daemons go away and come back; nodes are cordoned. */
class OutageE2E extends Scenario {
  LocalSlurmCluster cluster;

  @BeforeEach
  void managedOnly() {
    assumeTrue(stack.managed(), "stops and starts Slurm daemons of the local stack");
    cluster = stack.slurmCluster();
  }

  /** Scenario 7: bound pods survive a slurmctld restart; a pod created meanwhile binds after. */
  @Test
  void slurmctldRestartKeepsBoundPodsAndPendingOnesProceed() throws Exception {
    create(inferencePod("before-0", 2));
    create(inferencePod("before-1", 2));
    List<Pod> bound = List.of(awaitBound("before-0"), awaitBound("before-1"));
    List<Long> jobs = bound.stream().map(p -> placeholderOf(p).id()).toList();

    cluster.stopController();
    try {
      create(inferencePod("during", 2));
      Thread.sleep(5_000); // the extender polls a dead controller meanwhile
    } finally {
      cluster.startController();
    }
    awaitBound("during");

    for (int i = 0; i < bound.size(); i++) {
      Pod now = pod(bound.get(i).getMetadata().getName());
      assertThat(now.getMetadata().getUid()).isEqualTo(bound.get(i).getMetadata().getUid());
      assertThat(now.getMetadata().getDeletionTimestamp()).as("not evicted").isNull();
      assertThat(slurm.job(jobs.get(i)).map(Scenario::running)).contains(true);
      assertThat(eventReasons(now.getMetadata().getName()))
          .as("no eviction, no ended job: the reasons the extender really posts then")
          .doesNotContain("SlurmJobEnded", "EvictionBlocked");
    }
  }

  /** Scenario 8: slurmrestd down → pending with a clear Event; binds once it is back. */
  @Test
  void slurmrestdOutageKeepsPodsPendingWithAnEventUntilItReturns() {
    cluster.stopRest();
    try {
      create(inferencePod("patient", 2));
      await("an Event names the Slurm outage")
          .atMost(Duration.ofSeconds(30))
          .untilAsserted(
              () -> assertThat(eventReasons("patient")).contains("SlurmJobSubmitFailed"));
      assertThat(pod("patient").getSpec().getNodeName()).isNull();
    } finally {
      cluster.startRest();
    }
    long back = System.nanoTime();
    awaitBound("patient");
    System.out.printf(
        "[e2e] bound %d ms after slurmrestd returned%n", (System.nanoTime() - back) / 1_000_000);
    assertThat(placeholderOf(pod("patient")).nodes())
        .containsExactly(pod("patient").getSpec().getNodeName());
  }

  /** Scenario 9: cordon drains the Slurm node (our reason); uncordon resumes it. */
  @Test
  void cordonDrainsTheSlurmNodeAndUncordonResumesIt() {
    String node = stack.gpuNodes().get(stack.gpuNodes().size() - 1);
    try {
      setUnschedulable(node, true); // what kubectl cordon does
      await("Slurm drains " + node)
          .atMost(Duration.ofSeconds(20))
          .untilAsserted(
              () -> {
                SlurmNode n = slurmNode(node);
                assertThat(n.isDraining()).as("flags %s", n.flags()).isTrue();
                assertThat(n.reason()).startsWith("kse:");
              });
      // the drain is ours, so our own taint for unavailable Slurm nodes is not added to it
      assertThat(kube.nodes().withName(node).get().getSpec().getTaints())
          .noneMatch(t -> t.getKey().equals("kse.io/slurm-unavailable"));
    } finally {
      setUnschedulable(node, false);
    }
    await("Slurm resumes " + node)
        .atMost(Duration.ofSeconds(20))
        .untilAsserted(() -> assertThat(slurmNode(node).isDraining()).isFalse());
  }

  private SlurmNode slurmNode(String name) {
    return slurm.nodes().stream()
        .filter(n -> n.name().equals(name))
        .findFirst()
        .orElseThrow(() -> new AssertionError("Slurm has no node " + name));
  }
}
