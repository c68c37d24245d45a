package io.kse.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.fabric8.kubernetes.api.model.Pod;
import io.kse.slurm.SlurmJob;
import io.kse.slurm.SlurmNode;
import io.kse.slurm.testing.LocalSlurmCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Issue 44: what an uninstalled extender leaves behind, found and removed by its {@code cleanup}
 * (docs/uninstall.md): a bound pod's placeholder, a waiting pod's placeholder and gate, the drain
 * of a cordoned node, our taint on a node an admin drained, the writer Lease. Nothing of the
 * admin's (the drain) or of other Slurm users (their jobs) is touched.
 */
class CleanupE2E extends Scenario {
  static final Path JAR =
      E2eStack.repo().resolve("scheduler-extender/target/kse-scheduler-extender.jar");

  @Test
  void cleanupListsExactlyWhatTheExtenderLeftAndApplyRemovesIt() {
    assumeTrue(stack.managed(), "stops and starts the stack's extender");
    List<String> gpus = stack.gpuNodes();
    assumeTrue(gpus.size() >= 4, "a placed pod, a cordoned node, an admin's drain, a busy node");
    String free = gpus.get(0);
    String cordoned = gpus.get(gpus.size() - 1);
    String adminDrained = gpus.get(gpus.size() - 2);
    LocalSlurmCluster cluster = stack.slurmCluster();
    Map<Long, String> training = busyGpuNodes("inference", gpus.subList(1, gpus.size()));
    Pod placed = awaitBound(create(inferencePod("placed", 1)).getMetadata().getName());
    assertThat(placed.getSpec().getNodeName()).isEqualTo(free);
    long placedJob = placeholderOf(placed).id();
    create(inferencePod("waiting", 8)); // 7 GPUs free on the one node: its placeholder pends
    await("the waiting pod's placeholder")
        .atMost(CONVERGE)
        .until(() -> placeholderOf(pod("waiting").getMetadata().getUid()).isPresent());
    long waitingJob = placeholderOf(pod("waiting")).id();
    try {
      setUnschedulable(cordoned, true);
      cluster.cli(
          "scontrol", "update", "nodename=" + adminDrained, "state=drain", "reason=admin: bad fan");
      await("our drain and our taint")
          .atMost(Duration.ofSeconds(30))
          .until(
              () ->
                  slurmNode(cordoned).reason().startsWith("kse:")
                      && ourTaint(adminDrained).isPresent());
      stack.stopExtender();

      Result listed = cleanup();
      assertThat(listed.code()).as(listed.out()).isEqualTo(1);
      assertThat(listed.left())
          .as(listed.out())
          .containsExactlyInAnyOrder(
              "placeholder Slurm job " + placedJob + " (RUNNING) for pod " + ns + "/placed",
              "placeholder Slurm job " + waitingJob + " (PENDING) for pod " + ns + "/waiting",
              "drain Slurm node " + cordoned,
              "taint node " + adminDrained + " (kse.io/slurm-unavailable)",
              "gate pod " + ns + "/waiting",
              "lease kube-slurm-extender/kube-slurm-extender");
      assertThat(listed.out())
          .contains("strigger --get")
          .as("kube-scheduler still runs here: its Lease is left alone")
          .contains("running: lease kube-slurm-extender/kse-scheduler held by");
      if (kube.configMaps()
              .inNamespace("kube-slurm-extender")
              .withName("kube-slurm-extender-preemptions")
              .get()
          != null) { // a preemption was charged earlier in this run
        assertThat(listed.out())
            .contains("kept: ledger ConfigMap kube-slurm-extender/kube-slurm-extender-preemptions");
      }

      Result applied = cleanup("--apply");
      assertThat(applied.code()).as(applied.out()).isZero();
      assertThat(slurm.job(waitingJob).map(SlurmJob::state).orElseThrow().isFinal()).isTrue();
      // a running one completes once the node Epilog lets go: with no extender to ask, after its
      // UNREACHABLE_MAX_S (30 s)
      await("the bound pod's placeholder ended")
          .atMost(Duration.ofSeconds(60))
          .until(() -> slurm.job(placedJob).map(SlurmJob::state).orElseThrow().isFinal());
      assertThat(slurmNode(cordoned).isDraining()).as("our drain resumed").isFalse();
      assertThat(slurmNode(adminDrained).reason())
          .as("the admin's drain kept")
          .isEqualTo("admin: bad fan");
      assertThat(ourTaint(adminDrained)).isEmpty();
      assertThat(pod("waiting").getSpec().getSchedulingGates()).isEmpty();
      assertThat(training.keySet())
          .as("other users' jobs untouched")
          .allMatch(id -> slurm.job(id).map(Scenario::running).orElse(false));
      Result again = cleanup();
      assertThat(again.left()).as(again.out()).isEmpty();
    } finally {
      setUnschedulable(cordoned, false);
      cluster.cli("scontrol", "update", "nodename=" + adminDrained, "state=resume");
      stack.startExtender();
    }
  }

  record Result(int code, String out) {
    /**
     * What each "left:" line names (before " => ", what removing it does; a drain without its
     * state).
     */
    List<String> left() {
      return out.lines()
          .filter(l -> l.startsWith("left: "))
          .map(l -> l.substring("left: ".length(), l.indexOf(" => ")))
          .map(l -> l.startsWith("drain ") ? l.substring(0, l.indexOf(" (")) : l)
          .toList();
    }
  }

  /** The extender's own cleanup, with its config file and the stack's admin kubeconfig. */
  Result cleanup(String... args) {
    List<String> cmd =
        new ArrayList<>(
            List.of(
                ProcessHandle.current().info().command().orElse("java"),
                "-jar",
                JAR.toString(),
                "cleanup",
                "--config",
                Path.of(stack.env("KSE_E2E_DIR"), "extender.yaml").toString()));
    cmd.addAll(List.of(args));
    try {
      ProcessBuilder b = new ProcessBuilder(cmd).redirectErrorStream(true);
      b.environment().put("KUBECONFIG", stack.env("KUBECONFIG"));
      Process p = b.start();
      String out = new String(p.getInputStream().readAllBytes());
      return new Result(p.waitFor(), out);
    } catch (java.io.IOException e) {
      throw new IllegalStateException("cannot run " + cmd, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  SlurmNode slurmNode(String name) {
    return slurm.node(name).orElseThrow(() -> new AssertionError("Slurm has no node " + name));
  }
}
