package io.kse.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.kse.slurm.JobState;
import io.kse.slurm.SlurmJob;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * One owner per GPU on every way a placeholder ends, not only preemption (docs/gpu-ownership.md,
 * "The hold"): a bound pod whose containers take their time to stop (a finalizer keeps it
 * Terminating, as a model server freeing GPU memory would), a training job pinned to its node as
 * the witness, and the placeholder ended by an admin's cancel, its time limit or an admin's
 * requeue. Slurm's node Epilog (manifests/slurm/kse-node-epilog) keeps the node COMPLETING until
 * the pod is gone: the training job never starts before. Each run prints its window; one run
 * without the hold (a cancel, the Epilog told to let go at once) shows what the hold buys.
 */
class GpuHoldE2E extends Scenario {
  /** How the placeholder ends, and what its pod is told. */
  enum End {
    /** {@code scancel} by an admin (root), not the extender. */
    CANCEL("ended (CANCELLED)"),
    /** Its time limit, shortened under it with {@code scontrol update TimeLimit}. */
    TIME_LIMIT("ended (TIMEOUT)"),
    /** {@code scontrol requeue} by an admin: the run ends, the job waits again. */
    REQUEUE("was requeued"),
    /**
     * The node fails (its daemons stop answering, Slurm sets it DOWN) and is back right after the
     * pod's eviction: no Epilog runs on a DOWN node, and Slurm requeues the job (JobRequeue=1).
     */
    NODE_DOWN("was requeued");

    final String told;

    End(String told) {
      this.told = told;
    }
  }

  /** The ends the hold covers: every one but a node's failure. */
  static final String HELD = "^(CANCEL|TIME_LIMIT|REQUEUE)$";

  /** How long the pod is kept Terminating before its "containers" stop. */
  static final Duration POD_STOPS_AFTER = Duration.ofSeconds(6);

  /**
   * An external placeholder (EXTERNAL_JOB) runs no slurmd Epilog: Slurm frees its nodes at once
   * (node_scheduler.c: "is external, no need to wait to complete"); docs/gpu-ownership.md. There
   * only the window without a hold is measured.
   */
  static boolean external() {
    return "external".equals(System.getenv("KSE_E2E_SHAPE"));
  }

  Path epilogConf() {
    return Path.of(stack.slurmCluster().env("KSE_LAB_DIR"), "etc", "kse-node-epilog.conf");
  }

  @AfterEach
  void holdAsConfigured() throws Exception {
    if (stack.managed()) {
      Files.deleteIfExists(epilogConf());
    }
  }

  @ParameterizedTest
  @EnumSource(value = End.class, mode = EnumSource.Mode.MATCH_ALL, names = HELD)
  void aPlaceholderEndedAnyWayHoldsItsNodeUntilItsPodIsGone(End end) throws Exception {
    assumeTrue(stack.managed(), "ends placeholders with the Slurm CLI: needs the local Slurm");
    assumeTrue(!external(), "an external placeholder's nodes are freed at once: nothing holds");
    Window with = run(end, "held-" + slug(end));
    System.out.printf(
        "[e2e] hold %s, pod stopping %d s after its eviction: the next job ran %d ms after the pod"
            + " was last seen (50 ms looks)%n",
        end, POD_STOPS_AFTER.toSeconds(), -with.overlapMs());
    assertThat(with.overlapMs())
        .as("with the hold the next job runs only once the pod is gone")
        .isLessThanOrEqualTo(0);
  }

  /**
   * The same without the hold (the Epilog told to let go at once, {@code HOLD_MAX_S=0}; external
   * placeholders have none): Slurm hands the GPUs on while the pod still runs — what the hold
   * prevents, and proof that the scenario can see it. Once, by a cancel: every end path's window
   * without the hold is in benchmarks/RESULTS.md.
   */
  @Test
  void withoutTheHoldTheNextJobStartsWhileThePodRuns() throws Exception {
    assumeTrue(stack.managed(), "ends placeholders with the Slurm CLI: needs the local Slurm");
    Files.writeString(epilogConf(), "HOLD_MAX_S=0\n");
    Window without = run(End.CANCEL, "unheld-cancel");
    System.out.printf(
        "[e2e] no hold (%s placeholders), CANCEL, pod stopping %d s after its eviction: the next"
            + " job ran %d ms before the pod was last seen (two owners)%n",
        external() ? "external" : "batch", POD_STOPS_AFTER.toSeconds(), without.overlapMs());
    assertThat(without.overlapMs()).as("two owners, seen").isPositive();
  }

  /**
   * A failed node runs no Epilog: Slurm allocates nothing there while it is DOWN, but once it is
   * back (ReturnToService when its slurmd answers, or an admin's resume) the next job may start
   * while the evicted pod still stops. Measured with the node back right after the eviction: the
   * window is the rest of the pod's stop, never more.
   */
  @Test
  void aFailedNodeHoldsTheNextJobOnlyWhileItIsDown() throws Exception {
    assumeTrue(stack.managed(), "fails a node with the Slurm CLI: needs the local Slurm");
    Window back = run(End.NODE_DOWN, "failed-node");
    System.out.printf(
        "[e2e] node failed (%s placeholders), back right after the eviction, pod stopping %d s:"
            + " the next job ran %d ms before the pod was last seen%n",
        external() ? "external" : "batch", POD_STOPS_AFTER.toSeconds(), back.overlapMs());
    assertThat(back.overlapMs())
        .as("no longer than the pod's stop after the node came back")
        .isLessThanOrEqualTo(POD_STOPS_AFTER.toMillis());
  }

  static String slug(End end) {
    return end.name().toLowerCase(java.util.Locale.ROOT).replace('_', '-');
  }

  /**
   * @param overlapMs the pod last seen minus the next job first seen running (50 ms looks, the pod
   *     looked at first): positive is two owners, seen; zero or less, none seen
   */
  record Window(long overlapMs) {}

  Window run(End end, String name) throws Exception {
    create(inferencePod(name, 8).editMetadata().withFinalizers("e2e.kse.io/hold").endMetadata());
    Pod bound = awaitBound(name);
    String node = bound.getSpec().getNodeName();
    SlurmJob placeholder = placeholderOf(bound);
    long training = sbatch("training", node);
    await(name + ": the training job waits for " + node)
        .atMost(Duration.ofSeconds(10))
        .until(() -> slurm.job(training).map(j -> j.state() == JobState.PENDING).orElse(false));
    switch (end) {
      case CANCEL -> scancel(placeholder.id());
      case TIME_LIMIT ->
          stack
              .slurmCluster()
              .cli("scontrol", "update", "JobId=" + placeholder.id(), "TimeLimit=1");
      case REQUEUE ->
          stack.slurmCluster().cli("scontrol", "requeue", Long.toString(placeholder.id()));
      case NODE_DOWN -> {
        Thread.sleep(2_000); // not within the run's first second (see OutageE2E)
        stack.slurmCluster().freezeNode(node, true);
        stack
            .slurmCluster()
            .cli("scontrol", "update", "nodename=" + node, "state=down", "reason=e2e-failed");
      }
    }
    try {
      return watch(end, name, node, placeholder, training);
    } finally {
      if (end == End.NODE_DOWN) {
        stack.slurmCluster().freezeNode(node, false);
        stack.slurmCluster().resumeNode(node);
      }
    }
  }

  private Window watch(End end, String name, String node, SlurmJob placeholder, long training)
      throws Exception {
    // slurmctld checks time limits every 30 s, and a limit is a whole minute
    await(name + ": placeholder ended, pod evicted")
        .atMost(Duration.ofSeconds(end == End.TIME_LIMIT ? 150 : 20))
        .pollInterval(Duration.ofMillis(100))
        .until(() -> pod(name).getMetadata().getDeletionTimestamp() != null);
    SlurmJob ended = slurm.job(placeholder.id()).orElseThrow();
    assertThat(ended.state())
        .as(name + ": " + describe(ended))
        .isIn(
            end == End.CANCEL
                ? JobState.CANCELLED
                : end == End.TIME_LIMIT ? JobState.TIMEOUT : JobState.PENDING,
            JobState.COMPLETING,
            // a requeued placeholder whose pod is evicted is cancelled (it must not come back)
            end == End.REQUEUE || end == End.NODE_DOWN ? JobState.CANCELLED : JobState.COMPLETING,
            // a job Slurm may not requeue ends NODE_FAIL when its node fails
            end == End.NODE_DOWN ? JobState.NODE_FAIL : JobState.COMPLETING);
    List<String> named =
        end == End.NODE_DOWN ? List.of(end.told, "ended (NODE_FAIL)") : List.of(end.told);
    await(name + " told why: " + named)
        .atMost(Duration.ofSeconds(10))
        .until(
            () ->
                events(name).stream()
                    .map(e -> e.getMessage() == null ? "" : e.getMessage())
                    .anyMatch(
                        m ->
                            named.stream()
                                .anyMatch(
                                    n -> m.contains("Slurm job " + placeholder.id() + " " + n))));
    if (end == End.NODE_DOWN) {
      assertThat(slurm.job(training).map(j -> j.state()).orElseThrow())
          .as("nothing starts on a DOWN node")
          .isEqualTo(JobState.PENDING);
      stack.slurmCluster().freezeNode(node, false); // back: its slurmd answers, an admin resumes
      stack.slurmCluster().resumeNode(node);
    }
    // each look sees the pod first, then the job: the pod seen after the job was seen running is
    // proof that both held the GPUs; the other way round proves nothing either way
    Instant[] running = {null};
    Instant[] podLastSeen = {Instant.now()};
    Runnable look =
        () -> {
          if (pod(name) != null) {
            podLastSeen[0] = Instant.now();
          }
          if (running[0] == null && slurm.job(training).map(Scenario::running).orElse(false)) {
            running[0] = Instant.now();
          }
        };
    Instant stopAt = Instant.now().plus(POD_STOPS_AFTER);
    while (Instant.now().isBefore(stopAt)) {
      look.run();
      GpuOwnershipE2E.sleepMs(50);
    }
    kube.pods()
        .inNamespace(ns)
        .withName(name)
        .patch(PatchContext.of(PatchType.JSON_MERGE), "{\"metadata\":{\"finalizers\":null}}");
    await(name + " gone")
        .atMost(Duration.ofSeconds(10))
        .pollInterval(Duration.ofMillis(50))
        .until(
            () -> {
              look.run();
              return pod(name) == null;
            });
    await(name + ": the training job runs on " + node)
        .atMost(Duration.ofSeconds(30))
        .pollInterval(Duration.ofMillis(50))
        .until(
            () -> {
              look.run();
              return running[0] != null;
            });
    long overlap = Duration.between(running[0], podLastSeen[0]).toMillis();
    System.out.printf(
        "[e2e] %s on %s: placeholder %d %s (%s as first seen ended), pod last seen %s, training %d"
            + " seen running %s: overlap %d ms%n",
        name,
        node,
        placeholder.id(),
        slurm.job(placeholder.id()).map(j -> j.state().toString()).orElse("purged"),
        ended.state(),
        podLastSeen[0],
        training,
        running[0],
        overlap);
    scancel(training);
    return new Window(overlap);
  }
}
