package io.kse.slurm.cache;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * manifests/slurm/kse-allocation-hint run the way slurmctld runs it: in a process group of its own,
 * which slurmctld kills the moment the script exits (run_command's {@code _kill_pg}, 22.05 …
 * 26.05). The script must not lose a hint to that kill, even on a busy machine: CI once lost a
 * preempted job's end this way (SlurmHooksIT, 2026-11-26), and an earlier run lost start hints on
 * 24.11 and 26.05 while the machine ran another suite.
 */
class AllocationHintScriptTest {
  static final Path SCRIPT = Path.of("..", "manifests", "slurm", "kse-allocation-hint");
  static final int RUNS = 200;

  @TempDir Path dir;
  final Set<String> hints = ConcurrentHashMap.newKeySet();
  final Set<String> authorizations = ConcurrentHashMap.newKeySet();
  final AtomicBoolean loaded = new AtomicBoolean(true);
  final List<Thread> load = new ArrayList<>();
  HttpServer listener;

  @BeforeEach
  void listen() throws Exception {
    listener = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 200);
    listener.setExecutor(java.util.concurrent.Executors.newFixedThreadPool(4));
    listener.createContext(
        "/hooks/slurm-allocation",
        ex -> {
          hints.add(ex.getRequestURI().getQuery());
          String auth = ex.getRequestHeaders().getFirst("Authorization");
          authorizations.add(auth == null ? "none" : auth);
          ex.sendResponseHeaders(202, -1);
          ex.close();
        });
    listener.start();
  }

  @AfterEach
  void stop() throws Exception {
    loaded.set(false);
    for (Thread t : load) {
      t.join();
    }
    listener.stop(0);
  }

  /** The script installed as a site would, with this test's listener as its one extender. */
  Path installed() throws Exception {
    Path script = dir.resolve("kse-allocation-hint");
    Files.copy(SCRIPT, script);
    script.toFile().setExecutable(true);
    Files.createDirectory(dir.resolve("kse-allocation-hint.d"));
    Files.writeString(
        dir.resolve("kse-allocation-hint.d").resolve("test"),
        "127.0.0.1 " + listener.getAddress().getPort() + "\n");
    return script;
  }

  @Test
  void aNodeTriggerSaysWhichNodesAndNoJob() throws Exception {
    Path script = installed();
    // strigger runs the program with its arguments, the nodes' host list appended; a trigger has
    // no job, even if the environment it inherits names one
    for (String nodes : List.of("gpu-[1-2],gpu-7", "bad;name", "")) {
      Process p =
          new ProcessBuilder(script.toString(), "--node-event", nodes)
              .redirectErrorStream(true)
              .redirectOutput(ProcessBuilder.Redirect.DISCARD)
              .start();
      assertThat(p.waitFor()).isZero();
    }
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    while (hints.isEmpty() && System.nanoTime() < deadline) {
      Thread.sleep(20);
    }
    Thread.sleep(300); // anything else would have come by now
    assertThat(hints).containsExactly("event=node&nodes=gpu-[1-2],gpu-7");
  }

  /**
   * A site links the script into /etc/slurm and lists an off-host extender with its token file: the
   * list is found beside what the link points to, and the hint carries the token.
   */
  @Test
  void aStartThroughASymlinkCarriesItsExtendersToken() throws Exception {
    Path script = installed();
    Path token = dir.resolve("hint-token");
    Files.writeString(token, "s3cret\r\n");
    Files.writeString(
        dir.resolve("kse-allocation-hint.d").resolve("test"),
        "127.0.0.1 " + listener.getAddress().getPort() + " " + token + "\n");
    Path etc = Files.createDirectory(dir.resolve("etc"));
    Path link = Files.createSymbolicLink(etc.resolve("kse-allocation-hint"), script);
    ProcessBuilder pb =
        new ProcessBuilder(link.toString())
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.DISCARD);
    pb.environment().putAll(Map.of("SLURM_JOB_ID", "7", "SLURM_JOB_NAME", "kse-ns-pod"));
    pb.environment().put("SLURM_SCRIPT_CONTEXT", "prolog_slurmctld");
    pb.environment().put("SLURM_JOB_NODELIST", "gpu-3");
    assertThat(pb.start().waitFor()).isZero();
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    while (hints.isEmpty() && System.nanoTime() < deadline) {
      Thread.sleep(20);
    }
    assertThat(hints).containsExactly("job=7&event=allocated&nodes=gpu-3");
    assertThat(authorizations).containsExactly("Bearer s3cret");
  }

  @Test
  void everyEndIsSaidAlthoughSlurmKillsTheScriptsGroupAsItExits() throws Exception {
    Path script = installed();
    // a busy machine: the window between `setsid -f` returning and its child leaving the group is
    // what the kill hits, and it is widest when the child waits for a CPU
    for (int i = 0; i < 2 * Runtime.getRuntime().availableProcessors(); i++) {
      Thread t =
          new Thread(
              () -> {
                long spin = 0;
                while (loaded.get()) {
                  spin++;
                }
                if (spin == 42) {
                  System.out.print("");
                }
              });
      t.setDaemon(true);
      t.start();
      load.add(t);
    }
    // slurmctld's way, with bash's job control: its own group, wait, then kill that group at once
    String slurmctld =
        "set -m; for i in $(seq 1 "
            + RUNS
            + "); do SLURM_JOB_ID=$i SLURM_SCRIPT_CONTEXT=epilog_slurmctld"
            + " SLURM_JOB_NODELIST='gpu-[1-2]' \"$0\" & pid=$!; wait $pid;"
            + " kill -TERM -- -$pid 2>/dev/null || true; done";
    Process runs =
        new ProcessBuilder("bash", "-c", slurmctld, script.toString())
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.DISCARD)
            .start();
    assertThat(runs.waitFor()).isZero();
    Set<String> expected =
        IntStream.rangeClosed(1, RUNS)
            .mapToObj(i -> "job=" + i + "&event=end&nodes=gpu-[1-2]")
            .collect(Collectors.toSet());
    loaded.set(false);
    // the senders run on after their scripts: give them time, then say which hints never came
    long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
    while (hints.size() < RUNS && System.nanoTime() < deadline) {
      Thread.sleep(50);
    }
    Set<String> lost = new java.util.TreeSet<>(expected);
    lost.removeAll(hints);
    assertThat(lost).as("hints lost to the group kill, of " + RUNS).isEmpty();
    assertThat(hints).as("nothing but those ends").isEqualTo(expected);
  }
}
