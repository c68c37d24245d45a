package io.kse.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.fabric8.kubernetes.api.model.Pod;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Two replicas, and the one kube-scheduler asks is not the writer. */
class FailoverE2E extends Scenario {
  @BeforeEach
  void managedOnly() {
    assumeTrue(stack.managed(), "starts a second replica and kills the first");
  }

  /**
   * Issue 29 (a 60-minute soak on 26.05): kube-scheduler's leader asks its own extender, which need
   * not be the writer. That replica knows the writer's jobs only from Slurm's hints and its full
   * listings, minutes apart; having missed the hint of a job, it answered the woken pod's filter
   * calls "not submitted" until the pod's namespace went, 104 s on. Here the replica asked gets no
   * hints at all: the woken pod, which names its job, must be enough.
   */
  @Test
  void theReplicaKubeSchedulerAsksLetsAWokenPodThroughThoughItMissedTheHint() throws Exception {
    stack.startReplica(); // extender b stands by; the first is the writer, its kube-scheduler leads
    Path hintFile = hintFileOf(stack.extenderUrl("").getPort());
    Path aside = hintFile.resolveSibling("." + hintFile.getFileName() + ".aside");
    try {
      stack.killExtender(""); // no Lease release: b takes over once it expires (15 s)
      await("extender b takes the writer Lease")
          .atMost(Duration.ofSeconds(60))
          .pollInterval(Duration.ofMillis(500))
          .until(() -> stack.extenderMetric("b", "kse_writer").orElse(0.0) >= 1);
      Files.move(hintFile, aside); // from now on Slurm's hints reach b only
      stack.startExtender(""); // back as the standby; kube-scheduler's leader still asks it
      assertThat(stack.extenderMetric("", "kse_writer")).as("the first stands by").contains(0.0);

      create(inferencePod("asked-standby", 2));

      Pod bound = awaitBound("asked-standby");
      assertThat(placeholderOf(bound).nodes()).containsExactly(bound.getSpec().getNodeName());
    } finally {
      if (Files.exists(aside)) {
        Files.move(aside, hintFile);
      }
      stack.stopReplica();
      // the first takes the writer Lease back once b's has lapsed: later scenarios need a writer
      await("the first extender writes again")
          .atMost(Duration.ofSeconds(60))
          .pollInterval(Duration.ofMillis(500))
          .until(() -> stack.extenderMetric("", "kse_writer").orElse(0.0) >= 1);
    }
  }

  /**
   * Issue 44: Slurm's hooks reach one address, whichever replica is behind it. Hints go to the
   * standby only; it passes them on to the writer, whose pod is told which training job Slurm
   * preempted for it (only the writer tells, and only from the end hint). Then the writer moves
   * (killed: the standby takes the Lease) and hints go to the new standby only: the same again.
   */
  @Test
  void hintsToTheStandbyReachTheWriterWhereverItMoves() throws Exception {
    assumeTrue(stack.managed(), "submits training with sbatch: needs the local Slurm CLI");
    stack.startReplica(); // b stands by; the first writes
    Path first = hintFileOf(stack.extenderUrl("").getPort());
    Path second = hintFileOf(stack.extenderUrl("b").getPort());
    Path aside = first.resolveSibling("." + first.getFileName() + ".aside");
    try {
      Files.move(first, aside); // hints reach b, the standby, only
      preemptAndExpectTheEvent("via-standby-b");
      assertThat(stack.extenderMetrics("b").orElse(""))
          .as("b passed hints on")
          .containsPattern("kse_allocation_hints_total\\{[^}]*result=\"forwarded\"[^}]*\\} [1-9]");

      stack.killExtender(""); // the writer moves: b takes the Lease once the first's lapses
      await("extender b takes the writer Lease")
          .atMost(Duration.ofSeconds(60))
          .pollInterval(Duration.ofMillis(500))
          .until(() -> stack.extenderMetric("b", "kse_writer").orElse(0.0) >= 1);
      stack.startExtender(""); // back as the standby
      Files.move(aside, first);
      Files.move(second, aside); // hints reach the first, now the standby, only
      cancelSbatchJobs();
      kube.pods().inNamespace(ns).withName("via-standby-b").delete();
      await("the first pod's placeholder gone with it")
          .atMost(Duration.ofSeconds(60))
          .until(() -> activePlaceholders(ns).isEmpty());
      preemptAndExpectTheEvent("via-standby-a");
    } finally {
      if (Files.exists(aside)) {
        Files.move(aside, Files.exists(first) ? second : first);
      }
      stack.stopReplica();
      await("the first extender writes again")
          .atMost(Duration.ofSeconds(60))
          .pollInterval(Duration.ofMillis(500))
          .until(() -> stack.extenderMetric("", "kse_writer").orElse(0.0) >= 1);
    }
  }

  /** Training on every GPU node; a pod that preempts one is told which job gave way. */
  private void preemptAndExpectTheEvent(String name) {
    busyEveryGpuNode("training");
    awaitBound(create(inferencePod(name, 8)).getMetadata().getName());
    await(name + " is told which training job Slurm preempted for it")
        .atMost(Duration.ofSeconds(20))
        .untilAsserted(() -> assertThat(eventReasons(name)).contains("PreemptedSlurmJob"));
  }

  /** The allocation hint's file naming the extender whose ops port is {@code port}. */
  private Path hintFileOf(int port) throws IOException {
    Path dir = stack.dir().resolve("slurm/etc/kse-allocation-hint.d");
    try (Stream<Path> files = Files.list(dir)) {
      List<Path> found =
          files
              .filter(
                  f -> {
                    try {
                      String[] words = Files.readString(f).trim().split("\\s+");
                      return words.length >= 2 && words[1].equals(Integer.toString(port));
                    } catch (IOException e) {
                      return false;
                    }
                  })
              .toList();
      assertThat(found).as("the hint file of the extender on ops port " + port).hasSize(1);
      return found.get(0);
    }
  }
}
