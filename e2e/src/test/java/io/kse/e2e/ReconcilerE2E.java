package io.kse.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.kse.slurm.SlurmJob;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The placement reconciler's sequences on the real stack: whatever happened in between, a pod runs
 * only while its Slurm job holds its node, and a pending pod always has a live job. Each prints its
 * convergence time ({@code [e2e] converged …}).
 */
class ReconcilerE2E extends Scenario {
  /** Sequence 1: scancel of bound pods' jobs, several times: every pod evicted, every time. */
  @Test
  void boundPodsAreEvictedWheneverTheirJobEnds() {
    List<Long> times = new ArrayList<>();
    for (int round = 0; round < 3; round++) {
      List<Pod> bound = new ArrayList<>();
      for (int i = 0; i < 3; i++) {
        create(inferencePod("r" + round + "-" + i, 1));
      }
      for (int i = 0; i < 3; i++) {
        bound.add(awaitBound("r" + round + "-" + i));
      }
      long t0 = System.nanoTime();
      for (Pod p : bound) {
        scancel(placeholderOf(p).id());
      }
      for (Pod p : bound) {
        times.add(awaitLeaving(p.getMetadata().getName(), p.getMetadata().getUid(), t0));
        // Events are posted from their own queue: the eviction may be seen first
        await()
            .atMost(CONVERGE)
            .untilAsserted(
                () ->
                    assertThat(eventReasons(p.getMetadata().getName())).contains("SlurmJobEnded"));
      }
    }
    System.out.printf("[e2e] converged: scancel -> pod evicted, 9 pods, ms %s%n", times);
  }

  /** Sequence 2: the job ends while no extender runs; the restarted one evicts the pod. */
  @Test
  void aJobThatEndsWhileTheExtenderIsDownIsNoticedAfterTheRestart() throws Exception {
    assumeTrue(stack.managed(), "kills and restarts the extender of the local stack");
    Pod p = awaitBound(create(inferencePod("survivor", 1)).getMetadata().getName());
    long job = placeholderOf(p).id();
    stack.killExtender();
    try {
      scancel(job);
      Thread.sleep(1_000);
      assertThat(leaving("survivor", p.getMetadata().getUid())).as("nobody to notice").isFalse();
    } finally {
      stack.startExtender();
    }
    long t0 = System.nanoTime();
    long ms = awaitLeaving("survivor", p.getMetadata().getUid(), t0);
    System.out.printf("[e2e] converged: extender restarted -> pod evicted in %d ms%n", ms);
  }

  /** Sequence 3: a PodDisruptionBudget refuses the eviction; retried, then overridden. */
  @Test
  void anEvictionRefusedByADisruptionBudgetIsRetriedAndFinallyOverridden() {
    keepOneModelServer();
    Pod p = awaitBound(create(inferencePod("guarded", 1)).getMetadata().getName());
    // the disruption controller must count the pod healthy before the budget blocks anything
    await().atMost(CONVERGE).until(() -> pdbReady("keep-one"));
    long t0 = System.nanoTime();
    scancel(placeholderOf(p).id());
    await("EvictionBlocked")
        .atMost(CONVERGE)
        .untilAsserted(() -> assertThat(eventReasons("guarded")).contains("EvictionBlocked"));
    assertThat(leaving("guarded", p.getMetadata().getUid())).as("the budget holds it").isFalse();
    // the stack sets KSE_PDB_OVERRIDE_MS=20000: then the pod goes anyway (its GPUs are Slurm's)
    await("deleted past the budget")
        .atMost(Duration.ofSeconds(60))
        .pollInterval(Duration.ofMillis(200))
        .until(() -> leaving("guarded", p.getMetadata().getUid()));
    System.out.printf(
        "[e2e] converged: eviction refused by a PDB -> pod deleted after %d ms (override 20 s)%n",
        (System.nanoTime() - t0) / 1_000_000);
  }

  /**
   * Sequences 4 and 7: a pending pod says why it waits (our condition, Slurm's reason); an admin
   * cancels its job; a new one follows at once, with an Event.
   */
  @Test
  void aPendingPodSaysWhyAndGetsANewJobWhenItsOwnIsCancelledFromOutside() {
    // every GPU node busy with work of the pod's own tier: Slurm can preempt none of it
    busyEveryGpuNode("inference");
    Pod p = create(inferencePod("waiter", 8));
    String uid = p.getMetadata().getUid();
    await("a pending placeholder")
        .atMost(CONVERGE)
        .until(() -> placeholderOf(uid).filter(j -> !j.state().isFinal()).isPresent());
    await("the pod says why it waits")
        .atMost(CONVERGE)
        .untilAsserted(
            () ->
                assertThat(condition("waiter"))
                    .hasValueSatisfying(
                        c -> {
                          assertThat(c.getStatus()).isEqualTo("False");
                          assertThat(c.getReason()).isEqualTo("SlurmPending");
                          assertThat(c.getMessage()).contains("waiting for Slurm job");
                        }));
    long first = placeholderOf(uid).orElseThrow().id();
    long t0 = System.nanoTime();
    scancel(first);
    await("a new placeholder")
        .atMost(CONVERGE)
        .pollInterval(Duration.ofMillis(50))
        .until(
            () ->
                placeholderOf(uid).map(SlurmJob::id).orElse(first) != first
                    && !placeholderOf(uid).orElseThrow().state().isFinal());
    System.out.printf(
        "[e2e] converged: pending pod's job cancelled from outside -> new job in %d ms%n",
        (System.nanoTime() - t0) / 1_000_000);
    await()
        .atMost(CONVERGE)
        .untilAsserted(
            () -> assertThat(eventReasons("waiter")).contains("SlurmJobEnded", "WaitingForSlurm"));
    assertThat(pod("waiter").getSpec().getNodeName()).isNull();
  }

  Optional<PodCondition> condition(String name) {
    Pod p = pod(name);
    return p == null || p.getStatus() == null || p.getStatus().getConditions() == null
        ? Optional.empty()
        : p.getStatus().getConditions().stream()
            .filter(c -> "kse.io/SlurmAllocated".equals(c.getType()))
            .findFirst();
  }

  /**
   * Sequence 5: Slurm allocated a node that is cordoned before the pod binds (here the pod cannot
   * bind anywhere: a node selector no node matches). The job is replaced, not left holding GPUs.
   */
  @Test
  void aJobOnANodeCordonedBeforeTheBindIsReplaced() throws Exception {
    Pod p =
        create(
            inferencePod("unbindable", 1)
                .editSpec()
                .withNodeSelector(Map.of("kse.io/e2e", "no-such-node"))
                .endSpec());
    String uid = p.getMetadata().getUid();
    await("allocated")
        .atMost(CONVERGE)
        .until(() -> placeholderOf(uid).filter(Scenario::running).isPresent());
    SlurmJob first = placeholderOf(uid).orElseThrow();
    String node = first.nodes().get(0);
    long t0 = System.nanoTime();
    setUnschedulable(node, true);
    try {
      await("replaced")
          .atMost(CONVERGE)
          .pollInterval(Duration.ofMillis(50))
          .until(
              () ->
                  slurm.job(first.id()).map(j -> j.state().isFinal()).orElse(true)
                      && placeholderOf(uid).map(j -> j.id() != first.id()).orElse(false));
      System.out.printf(
          "[e2e] converged: allocated node cordoned before the bind -> job replaced in %d ms%n",
          (System.nanoTime() - t0) / 1_000_000);
      await()
          .atMost(CONVERGE)
          .untilAsserted(
              () -> assertThat(eventReasons("unbindable")).contains("AllocatedNodeUnusable"));
      if (slurm.apiVersion().supportsExcludedNodes()) {
        await("the new job runs elsewhere")
            .atMost(CONVERGE)
            .until(() -> placeholderOf(uid).filter(Scenario::running).isPresent());
        assertThat(placeholderOf(uid).orElseThrow().nodes()).doesNotContain(node);
      } else {
        // slurmrestd 22.05 cannot exclude a node: Slurm may give the cordoned one again (it did,
        // four times a second, before replacements were spaced); the pod is told, never bound there
        Thread.sleep(5_000);
        long jobsOfThePod =
            jobs().stream()
                .filter(j -> j.placeholder().map(t -> t.uid().equals(uid)).orElse(false))
                .count();
        assertThat(jobsOfThePod)
            .as("replacements spaced 2 s, 4 s …, not a loop")
            .isLessThanOrEqualTo(5);
        assertThat(kube.pods().inNamespace(ns).withName("unbindable").get().getSpec().getNodeName())
            .isNull();
      }
    } finally {
      setUnschedulable(node, false);
    }
  }
}
