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
    REQUEUE("was requeued");

    final String told;

    End(String told) {
      this.told = told;
    }
  }

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
  @EnumSource(End.class)
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
    }
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
            end == End.REQUEUE ? JobState.CANCELLED : JobState.COMPLETING);
    String named = end.told;
    await(name + " told why: " + named)
        .atMost(Duration.ofSeconds(10))
        .until(
            () ->
                events(name).stream()
                    .anyMatch(
                        e ->
                            e.getMessage() != null
                                && e.getMessage()
                                    .contains("Slurm job " + placeholder.id() + " " + named)));
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
