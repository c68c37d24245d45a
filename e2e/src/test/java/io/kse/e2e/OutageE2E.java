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
      // a submission that failed says so; a writer that took over just before the outage and has
      // not read Slurm's jobs since submits nothing, and says Slurm is unreachable (26.05 CI)
      await("an Event names the Slurm outage")
          .atMost(Duration.ofSeconds(30))
          .untilAsserted(
              () ->
                  assertThat(events("patient"))
                      .anySatisfy(
                          e ->
                              assertThat(
                                      e.getReason().equals("SlurmJobSubmitFailed")
                                          || e.getMessage().startsWith("Slurm is unreachable"))
                                  .as(e.getReason() + ": " + e.getMessage())
                                  .isTrue()));
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

  /**
   * Issue 26 #6: a Slurm node that fails under a bound pod (its slurmd stops answering, Slurm sets
   * it DOWN): the pod is evicted, and the Kubernetes node is tainted for as long as Slurm has the
   * node down or not responding; the taint goes when Slurm has it back.
   */
  @Test
  void aSlurmNodeDownUnderABoundPodEvictsItAndTaintsTheNodeUntilItIsBack() throws Exception {
    Pod p = awaitBound(create(inferencePod("on-failing", 8)).getMetadata().getName());
    String node = p.getSpec().getNodeName();
    long placeholder = placeholderOf(p).id();
    // a node that fails under a running pod, not within its job's first second: 26.05 handles the
    // launch's answer at the next second and that answer returns a DOWN node to service
    // (slurmctld.log "node_did_resp: node … returned to service")
    Thread.sleep(2_000);
    whileSlurmNodeIsDown(
        node,
        () -> {
          await("the pod evicted")
              .atMost(Duration.ofSeconds(30))
              .until(
                  () -> {
                    Pod now = pod("on-failing");
                    return now == null || now.getMetadata().getDeletionTimestamp() != null;
                  });
          // Slurm requeues a job whose node fails (JobRequeue=1, its default) or ends it
          // NODE_FAIL, with no reason of its own; the node's state says why where the cache has
          // read it by then (node trigger or listing)
          await("the pod told why")
              .atMost(Duration.ofSeconds(10))
              .until(
                  () ->
                      events("on-failing").stream()
                          .map(io.fabric8.kubernetes.api.model.Event::getMessage)
                          .filter(java.util.Objects::nonNull)
                          .filter(
                              m ->
                                  m.contains("Slurm job " + placeholder + " was requeued")
                                      || m.contains(
                                          "Slurm job " + placeholder + " ended (NODE_FAIL)"))
                          .peek(m -> System.out.println("[e2e] node down, the pod told: " + m))
                          .findAny()
                          .isPresent());
          await(node + " tainted while Slurm has it down")
              .atMost(Duration.ofSeconds(20))
              .until(() -> ourTaint(node).filter(v -> v.startsWith("down")).isPresent());
        });
    await(node + " untainted once Slurm has it back")
        .atMost(Duration.ofSeconds(60))
        .until(() -> ourTaint(node).isEmpty());
  }

  private SlurmNode slurmNode(String name) {
    return slurm.nodes().stream()
        .filter(n -> n.name().equals(name))
        .findFirst()
        .orElseThrow(() -> new AssertionError("Slurm has no node " + name));
  }
}
