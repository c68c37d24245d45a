package io.kse.slurm.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.sun.net.httpserver.HttpServer;
import io.kse.slurm.JobState;
import io.kse.slurm.SlurmClient;
import io.kse.slurm.SlurmClients;
import io.kse.slurm.SlurmJob;
import io.kse.slurm.testing.LocalSlurmCluster;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Every way a placeholder's run ends (the time limit on 24.11 only: {@link #ends}), on the Slurm of
 * this run (22.05, 24.11 and 26.05 in ./kse test): what the bridge reads while the node Epilog
 * (manifests/slurm/kse-node-epilog) holds the node for a pod that still runs, and after — the end
 * the extender names to the pod's user ({@link SlurmJob#endedAs}) — and that a job pinned to the
 * node starts only once the hold lets go. The extender's side of the hold is played by a small HTTP
 * server answering the Epilog's question.
 */
class JobEndIT {
  /** How an admin (root, not the placeholder's user) ends the run, and what the bridge must say. */
  enum End {
    CANCEL(JobState.CANCELLED),
    TIME_LIMIT(JobState.TIMEOUT),
    REQUEUE(JobState.PENDING),
    PREEMPTION(JobState.PREEMPTED),
    /** No Epilog runs on a DOWN node; Slurm allocates nothing there until it is resumed. */
    NODE_DOWN(JobState.PENDING);

    final JobState named;

    End(JobState named) {
      this.named = named;
    }
  }

  static LocalSlurmCluster cluster;
  static SlurmClient slurm;
  static HoldAnswers answers;
  static Path listed;

  @BeforeAll
  static void start() throws IOException {
    cluster = LocalSlurmCluster.shared(LocalSlurmCluster.Mode.PARTITION);
    slurm = SlurmClients.connect(cluster.config(), new SimpleMeterRegistry());
    cluster.cancelAll();
    answers = HoldAnswers.start();
    // the Epilog and the allocation hook ask every extender listed here (one line: HOST PORT)
    listed = Path.of(cluster.env("KSE_LAB_DIR"), "etc", "kse-allocation-hint.d", "job-end-it");
    Files.writeString(listed, "127.0.0.1 " + answers.port() + "\n");
  }

  @AfterAll
  static void stop() throws IOException {
    Files.deleteIfExists(listed);
    answers.stop();
    cluster.cancelAll();
  }

  @Test
  void everyEndIsNamedWhileTheHoldKeepsTheNodeAndAfterItLetsGo() throws InterruptedException {
    Map<End, SlurmJob> placeholders = new EnumMap<>(End.class);
    Map<End, Long> witnesses = new EnumMap<>(End.class);
    SlurmJob requeued = null;
    for (End end : ends()) {
      long id =
          slurm.submit(
              cluster
                  .placeholder("end-" + end.name().toLowerCase(java.util.Locale.ROOT))
                  .partition("inference")
                  .exclusive(true)
                  .gresPerNode("gpu:h100:8")
                  .build());
      answers.hold(id);
      placeholders.put(end, awaitJob(id, "running", j -> j.state() == JobState.RUNNING));
    }
    // no run ends within its first second: 26.05 handles the launch's answer at the next second,
    // and that answer returns a DOWN node to service (slurmctld.log "node_did_resp: … returned")
    Thread.sleep(2_000);
    for (End end : ends()) {
      SlurmJob p = placeholders.get(end);
      String node = p.nodes().get(0);
      // the next job for those GPUs: a preemptor for PREEMPTION, training for the others
      witnesses.put(end, pinned(end == End.PREEMPTION ? "critical" : "training", node));
      switch (end) {
        case CANCEL -> cluster.cli("scancel", Long.toString(p.id()));
        case TIME_LIMIT -> cluster.cli("scontrol", "update", "JobId=" + p.id(), "TimeLimit=1");
        case REQUEUE -> cluster.cli("scontrol", "requeue", Long.toString(p.id()));
        case PREEMPTION -> {} // the critical job preempts it (GraceTime=30 on inference)
        case NODE_DOWN -> {
          // fails as a crashed node would: its daemons stop answering (a DOWN node whose slurmd
          // answers is back at once), then Slurm is told
          cluster.freezeNode(node, true);
          cluster.cli("scontrol", "update", "nodename=" + node, "state=down", "reason=job-end-it");
          // read at once: Slurm requeues it and may start it elsewhere within seconds (the
          // extender cancels a requeued placeholder whose pod it evicted)
          requeued = awaitJob(p.id(), "requeued", j -> j.state() != JobState.RUNNING);
          slurm.cancel(p.id());
        }
      }
    }
    try {
      // preemption: the run goes on through the grace time with Slurm's choice on it
      SlurmJob chosen =
          awaitJob(
              placeholders.get(End.PREEMPTION).id(),
              "chosen for preemption",
              j -> j.preemptTime().isPresent());
      assertThat(chosen.state()).as("a grace time's run goes on").isEqualTo(JobState.RUNNING);

      for (End end : ends()) {
        SlurmJob p = placeholders.get(end);
        String node = p.nodes().get(0);
        if (end != End.NODE_DOWN) {
          // slurmctld checks time limits every 30 s and a limit is a whole minute; grace 30 s
          await(end + ": the Epilog asks about job " + p.id() + " on " + node)
              .atMost(Duration.ofSeconds(150))
              .pollInterval(Duration.ofMillis(200))
              .until(() -> answers.asked(p.id(), node));
        }
        SlurmJob ending =
            end == End.NODE_DOWN
                ? requeued
                : awaitJob(p.id(), "no longer running", j -> j.state() != JobState.RUNNING);
        System.out.printf(
            "[measure] %s on Slurm %s, held: state %s, reason %s, restarts %d → named %s%n",
            end,
            LocalSlurmCluster.version(),
            ending.state(),
            ending.stateReason(),
            ending.restartCount(),
            ending.endedAs());
        assertThat(ending.endedAs()).as(end + " while held: " + ending).isEqualTo(end.named);
        assertThat(stateOf(witnesses.get(end)))
            .as(end + ": the next job waits while the hold keeps " + node)
            .isEqualTo(JobState.PENDING);
      }

      placeholders.values().forEach(p -> answers.release(p.id()));
      back(placeholders.get(End.NODE_DOWN).nodes().get(0));
      for (End end : ends()) {
        long witness = witnesses.get(end);
        await(end + ": the next job starts once the node is let go")
            .atMost(Duration.ofSeconds(30))
            .pollInterval(Duration.ofMillis(100))
            .until(() -> stateOf(witness) == JobState.RUNNING);
        if (end != End.NODE_DOWN) { // cancelled once requeued, as the extender does
          SlurmJob after = slurm.job(placeholders.get(end).id()).orElseThrow();
          assertThat(after.endedAs()).as(end + " after the hold: " + after).isEqualTo(end.named);
        }
      }
    } finally {
      back(placeholders.get(End.NODE_DOWN).nodes().get(0));
    }
  }

  /**
   * A hold whose first questions find no extender synced (one restarting) is kept once one answers:
   * the Epilog knows the job for a placeholder by its comment (given to it on every version, 22.05
   * too), so it keeps asking instead of letting the node go at the first "unknown".
   */
  @Test
  void aHoldWhoseFirstQuestionsGoUnansweredIsKeptOnceAnExtenderAnswers()
      throws InterruptedException {
    long id =
        slurm.submit(
            cluster
                .placeholder("end-unanswered")
                .partition("inference")
                .exclusive(true)
                .gresPerNode("gpu:h100:8")
                .build());
    answers.hold(id);
    answers.unsyncedFor(id, 8); // 2 s of "unknown"
    String node = awaitJob(id, "running", j -> j.state() == JobState.RUNNING).nodes().get(0);
    long witness = pinned("training", node);
    // as in the test above: the run is not ended in its launch's first seconds (this test is about
    // the unanswered questions, not a cancel racing slurmd's launch on a loaded machine)
    Thread.sleep(2_000);
    cluster.cli("scancel", Long.toString(id));
    try {
      await("the Epilog asks about job " + id)
          .atMost(Duration.ofSeconds(60))
          .pollInterval(Duration.ofMillis(100))
          .until(() -> answers.asked(id, node));
    } catch (org.awaitility.core.ConditionTimeoutException e) {
      throw new AssertionError(e.getMessage() + "\n" + whatSlurmSaysOf(id, node), e);
    }
    await("past the unanswered questions")
        .atMost(Duration.ofSeconds(30))
        .until(() -> answers.unsynced.get(id).get() < 0);
    assertThat(stateOf(witness))
        .as("the next job waits: the hold was kept through the unanswered questions")
        .isEqualTo(JobState.PENDING);
    answers.release(id);
    await("the next job starts once the node is let go")
        .atMost(Duration.ofSeconds(30))
        .pollInterval(Duration.ofMillis(100))
        .until(() -> stateOf(witness) == JobState.RUNNING);
    cluster.cli("scancel", Long.toString(witness));
  }

  /** For a failure's message: the job as slurmctld has it, and its node's slurmd log about it. */
  static String whatSlurmSaysOf(long id, String node) {
    StringBuilder said = new StringBuilder();
    try {
      said.append(cluster.cli("scontrol", "show", "job", Long.toString(id)));
    } catch (RuntimeException e) {
      said.append("scontrol show job ").append(id).append(": ").append(e.getMessage());
    }
    Path log = Path.of(cluster.env("KSE_LAB_DIR"), "log", "slurmd-" + node + ".log");
    try (var lines = Files.lines(log)) {
      String job = Long.toString(id);
      lines
          .filter(l -> l.matches(".*\\b" + job + "\\b.*"))
          .forEach(l -> said.append("\n").append(log.getFileName()).append(": ").append(l));
    } catch (IOException | java.io.UncheckedIOException e) {
      said.append("\n").append(log).append(": ").append(e.getMessage());
    }
    return said.toString();
  }

  /** The failed node answers again and is resumed (once more is harmless: both are idempotent). */
  static void back(String node) {
    cluster.freezeNode(node, false);
    cluster.resumeNode(node);
  }

  /**
   * Every end, but the time limit only on 24.11: a limit is a whole minute and slurmctld checks it
   * every 30 s, so it is the slowest end by far (90 s of ./kse test per version), and GpuHoldE2E
   * ends placeholders by time limit on 22.05 and 26.05 already; 24.11 has no e2e stack.
   */
  static java.util.List<End> ends() {
    return java.util.Arrays.stream(End.values())
        .filter(e -> e != End.TIME_LIMIT || LocalSlurmCluster.version().equals("24.11"))
        .toList();
  }

  /** An exclusive 8-GPU job on {@code node}, submitted by root with sbatch. */
  static long pinned(String partition, String node) {
    String out =
        cluster.cli(
            "sbatch",
            "--parsable",
            "-p",
            partition,
            "-w",
            node,
            "--exclusive",
            "-N1",
            "--gres=gpu:h100:8",
            "-J",
            "next-on-" + node,
            "-o",
            "/dev/null",
            "-D",
            cluster.jobDir().toString(),
            "--wrap",
            "sleep 3600");
    return Long.parseLong(out.trim().split(";")[0]);
  }

  static JobState stateOf(long id) {
    return slurm.job(id).map(SlurmJob::state).orElse(JobState.UNKNOWN);
  }

  static SlurmJob awaitJob(long id, String what, java.util.function.Predicate<SlurmJob> until) {
    SlurmJob[] seen = {null};
    await("job " + id + " " + what)
        .atMost(Duration.ofSeconds(150))
        .pollInterval(Duration.ofMillis(100))
        .until(
            () -> {
              seen[0] = slurm.job(id).orElse(null);
              return seen[0] != null && until.test(seen[0]);
            });
    return seen[0];
  }

  /**
   * The extender's answers to {@code GET /hooks/slurm-hold?job=J&node=N}: hold for the jobs told,
   * release for every other; the allocation hook's posts are taken and ignored.
   */
  static final class HoldAnswers {
    private final HttpServer server;
    private final Set<Long> holding = ConcurrentHashMap.newKeySet();
    private final Set<String> asked = ConcurrentHashMap.newKeySet();
    private final Map<Long, java.util.concurrent.atomic.AtomicInteger> unsynced =
        new ConcurrentHashMap<>();

    private HoldAnswers(HttpServer server) {
      this.server = server;
    }

    static HoldAnswers start() throws IOException {
      HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 16);
      HoldAnswers answers = new HoldAnswers(server);
      server.createContext(
          "/hooks/slurm-hold",
          exchange -> {
            Map<String, String> q = query(exchange.getRequestURI().getRawQuery());
            long job = Long.parseLong(q.getOrDefault("job", "0"));
            answers.asked.add(job + "@" + q.getOrDefault("node", ""));
            var left = answers.unsynced.get(job);
            if (left != null && left.getAndDecrement() > 0) {
              exchange.sendResponseHeaders(503, -1); // an extender not synced yet: "unknown"
              exchange.close();
              return;
            }
            byte[] body =
                (answers.holding.contains(job) ? "hold\n" : "release\n")
                    .getBytes(StandardCharsets.US_ASCII);
            exchange.sendResponseHeaders(200, body.length);
            exchange.getResponseBody().write(body);
            exchange.close();
          });
      server.createContext(
          "/hooks/slurm-allocation",
          exchange -> {
            exchange.sendResponseHeaders(202, -1);
            exchange.close();
          });
      server.start();
      return answers;
    }

    private static Map<String, String> query(String raw) {
      Map<String, String> q = new java.util.HashMap<>();
      for (String kv : raw == null ? new String[0] : raw.split("&")) {
        int eq = kv.indexOf('=');
        if (eq > 0) {
          q.put(kv.substring(0, eq), kv.substring(eq + 1));
        }
      }
      return q;
    }

    int port() {
      return server.getAddress().getPort();
    }

    void hold(long job) {
      holding.add(job);
    }

    /**
     * The first {@code n} questions about {@code job} are answered 503, as by a restarting
     * extender.
     */
    void unsyncedFor(long job, int n) {
      unsynced.put(job, new java.util.concurrent.atomic.AtomicInteger(n));
    }

    void release(long job) {
      holding.remove(job);
    }

    boolean asked(long job, String node) {
      return asked.contains(job + "@" + node);
    }

    void stop() {
      server.stop(0);
    }
  }
}
