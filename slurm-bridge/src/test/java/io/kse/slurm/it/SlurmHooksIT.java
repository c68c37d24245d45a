package io.kse.slurm.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.sun.net.httpserver.HttpServer;
import io.kse.slurm.testing.LocalSlurmCluster;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The Slurm-side hooks against the real slurmctld (issue 28): manifests/slurm/kse-allocation-hint
 * as PrologSlurmctld and EpilogSlurmctld says "allocated" when a placeholder starts and "end" when
 * it completes or is cancelled while running, and says nothing for one cancelled while it pends
 * (the extender's own checks must catch that one). A loopback listener stands in for the extender.
 * A drained node is said by the node trigger (strigger). Hints lost under load on every version
 * were slurmctld killing the script's process group before the sender had left it
 * (AllocationHintScriptTest); no version is skipped since.
 */
class SlurmHooksIT {
  static LocalSlurmCluster cluster = LocalSlurmCluster.shared(LocalSlurmCluster.Mode.PARTITION);
  final List<String> hints = new CopyOnWriteArrayList<>();
  HttpServer listener;
  Path registration;

  @BeforeEach
  void listen() throws Exception {
    cluster.cancelAll();
    listener = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    listener.createContext(
        "/hooks/slurm-allocation",
        ex -> {
          hints.add(ex.getRequestURI().getQuery());
          ex.sendResponseHeaders(202, -1);
          ex.close();
        });
    listener.start();
    registration = Path.of(cluster.env("KSE_LAB_DIR"), "etc", "kse-allocation-hint.d", "it-hooks");
    Files.writeString(registration, "127.0.0.1 " + listener.getAddress().getPort() + "\n");
  }

  @AfterEach
  void stop() throws Exception {
    if (registration != null) { // null when listen() failed before writing it
      Files.deleteIfExists(registration);
    }
    if (listener != null) {
      listener.stop(0);
    }
  }

  long sbatch(String name, String wrap, boolean held) {
    return sbatch("training", name, wrap, held);
  }

  long sbatch(String partition, String name, String wrap, boolean held, String... more) {
    List<String> cmd =
        new java.util.ArrayList<>(
            List.of(
                "sbatch",
                "--parsable",
                "-p",
                partition,
                "-N1",
                "-J",
                name,
                "-o",
                "/dev/null",
                "-D",
                cluster.jobDir().toString()));
    if (held) {
      cmd.add("--hold");
    }
    cmd.addAll(List.of(more));
    cmd.addAll(List.of("--wrap", wrap));
    return Long.parseLong(cluster.cli(cmd.toArray(String[]::new)).trim().split(";")[0]);
  }

  @Test
  void startAndEndAreSaidForPlaceholdersAndNothingForOneCancelledWhilePending() throws Exception {
    long completes = sbatch("kse-it-completes", "sleep 1", false);
    long cancelled = sbatch("kse-it-cancelled", "sleep 600", false);
    long pending = sbatch("kse-it-pending", "sleep 600", true);
    long other = sbatch("training-run", "sleep 1", false);
    await("start hints")
        .atMost(Duration.ofSeconds(20))
        .until(() -> said(completes, "allocated") && said(cancelled, "allocated"));
    cluster.cli("scancel", Long.toString(cancelled));
    cluster.cli("scancel", Long.toString(pending));
    try {
      await("end hints")
          .atMost(Duration.ofSeconds(30))
          .until(() -> said(completes, "end") && said(cancelled, "end") && said(other, "end"));
    } finally {
      System.out.printf("[measure] Slurm %s hooks said: %s%n", LocalSlurmCluster.version(), hints);
    }
    Thread.sleep(3_000); // long enough for a hint that would come
    assertThat(hints)
        .as("a job cancelled while pending runs neither script")
        .noneMatch(h -> h.startsWith("job=" + pending + "&"));
    assertThat(hints)
        .as("another user's job: its end (a possible victim), never its start")
        .noneMatch(h -> h.startsWith("job=" + other + "&event=allocated"));
    assertThat(hints)
        .as("an end names the nodes the job ran on, as a host list")
        .anyMatch(h -> h.startsWith("job=" + completes + "&event=end&nodes=") && !h.endsWith("="));
  }

  /**
   * Issue 28: a job Slurm preempts (requeues) for a higher partition's job: its end is said, with
   * the node it lost, so the extender knows the victim without listing everyone's jobs.
   */
  @Test
  void aPreemptedJobsEndIsSaidWithTheNodeItLost() throws Exception {
    String node = "gpu-node-0";
    long victim = sbatch("training", "train-victim", "sleep 600", false, "-w", node, "--exclusive");
    await("victim running")
        .atMost(Duration.ofSeconds(20))
        .until(
            () ->
                cluster
                    .cli("squeue", "-h", "-j", Long.toString(victim), "-o", "%T")
                    .contains("RUNNING"));
    long preemptor =
        sbatch("inference", "kse-it-preemptor", "sleep 600", false, "-w", node, "--exclusive");
    try {
      await("victim's end")
          .atMost(Duration.ofSeconds(30))
          .until(() -> hints.contains("job=" + victim + "&event=end&nodes=" + node));
      await("preemptor's start")
          .atMost(Duration.ofSeconds(30))
          .until(() -> said(preemptor, "allocated"));
    } finally {
      System.out.printf("[measure] Slurm %s hooks said: %s%n", LocalSlurmCluster.version(), hints);
      cluster.cancelAll();
    }
  }

  /**
   * Issue 28: the node trigger slurm-cluster sets as a site would (strigger, PERM, for every node)
   * runs the hook with the node's name when it is drained, and on 23.02+ when it is resumed; the
   * extender then reads that one node, without DETAIL where the version takes flags.
   */
  @Test
  void aDrainedNodeIsSaidAndItAloneCanBeRead() throws Exception {
    String node = "gpu-node-7"; // idle: no other test of this class places there
    String hint = "event=node&nodes=" + node;
    try (io.kse.slurm.SlurmClient slurm =
        io.kse.slurm.SlurmClients.connect(
            cluster.config(), new io.micrometer.core.instrument.simple.SimpleMeterRegistry())) {
      cluster.cli("scontrol", "update", "nodename=" + node, "state=drain", "reason=kse-it");
      try {
        // slurmctld looks at its triggers every 15 s
        await("drain said").atMost(Duration.ofSeconds(40)).until(() -> hints.contains(hint));
        assertThat(slurm.node(node)).get().matches(n -> n.isDraining(), "draining");
        assertThat(slurm.node("gpu-node-999")).isEmpty();
        hints.clear();
      } finally {
        cluster.resumeNode(node);
      }
      if (!LocalSlurmCluster.version().equals("22.05")) { // 22.05 has no resume trigger
        await("resume said").atMost(Duration.ofSeconds(40)).until(() -> hints.contains(hint));
      }
      assertThat(slurm.node(node)).get().matches(n -> !n.isDraining(), "resumed");
    } finally {
      System.out.printf(
          "[measure] Slurm %s node trigger said: %s%n", LocalSlurmCluster.version(), hints);
    }
  }

  /** The hook said {@code event} for the job (an end also names its nodes). */
  private boolean said(long job, String event) {
    String head = "job=" + job + "&event=" + event;
    return hints.stream().anyMatch(h -> h.equals(head) || h.startsWith(head + "&"));
  }
}
