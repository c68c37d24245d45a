package io.kse.slurm.cache;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * manifests/slurm/kse-node-epilog run as slurmd runs a node Epilog (its environment, its exit code
 * ignored only if 0): it holds while the extender says hold, lets go at once on release, asks a job
 * that is not a placeholder nothing, and is bounded whatever the extender does.
 */
class NodeEpilogScriptTest {
  static final Path SCRIPT = Path.of("..", "manifests", "slurm", "kse-node-epilog");

  @TempDir Path dir;
  final List<String> asked = new CopyOnWriteArrayList<>();
  final AtomicInteger holdsLeft = new AtomicInteger();
  volatile int status = 200;
  HttpServer listener;

  @BeforeEach
  void listen() throws Exception {
    listener = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 50);
    listener.createContext(
        "/hooks/slurm-hold",
        ex -> {
          asked.add(ex.getRequestURI().getQuery());
          byte[] body =
              (status != 200
                      ? "unknown: not synced\n"
                      : holdsLeft.getAndDecrement() > 0
                          ? "hold 1 pod(s) of Slurm job 7 still run on gpu-node-1: [ns/p]\n"
                          : "release no pod of Slurm job 7 runs on gpu-node-1\n")
                  .getBytes(StandardCharsets.UTF_8);
          ex.sendResponseHeaders(status, body.length);
          ex.getResponseBody().write(body);
          ex.close();
        });
    listener.start();
  }

  @AfterEach
  void stop() {
    listener.stop(0);
  }

  Path installed(String... extenders) throws Exception {
    Path script = dir.resolve("kse-node-epilog");
    Files.copy(SCRIPT, script);
    script.toFile().setExecutable(true);
    Path d = Files.createDirectory(dir.resolve("kse-allocation-hint.d"));
    for (int i = 0; i < extenders.length; i++) {
      Files.writeString(d.resolve("e" + i), extenders[i] + "\n");
    }
    return script;
  }

  String self() {
    return "127.0.0.1 " + listener.getAddress().getPort();
  }

  /** Runs the Epilog for job 7 on gpu-node-1 with these extra variables; its run time. */
  Duration epilog(Path script, Map<String, String> env) throws Exception {
    ProcessBuilder pb = new ProcessBuilder(script.toString()).redirectErrorStream(true);
    pb.environment().keySet().removeIf(k -> k.startsWith("SLURM") || k.startsWith("KSE_"));
    pb.environment()
        .putAll(
            Map.of(
                "SLURM_SCRIPT_CONTEXT", "epilog_slurmd",
                "SLURM_JOB_ID", "7",
                "SLURMD_NODENAME", "gpu-node-1",
                "SLURM_JOB_USER", "kse"));
    pb.environment().putAll(env);
    long start = System.nanoTime();
    Process p = pb.start();
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("the Epilog ends by itself").isTrue();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.exitValue()).as("an Epilog that fails drains the node: " + out).isZero();
    return Duration.ofNanos(System.nanoTime() - start);
  }

  static final Map<String, String> PLACEHOLDER =
      Map.of("SLURM_JOB_COMMENT", "kse:v1 pod=ns/p uid=u");

  @Test
  void holdsWhileThePodRunsAndLetsGoOnRelease() throws Exception {
    Path script = installed(self());
    holdsLeft.set(6);
    Duration took = epilog(script, PLACEHOLDER);
    assertThat(asked).hasSize(7).allMatch(q -> q.equals("job=7&node=gpu-node-1"));
    assertThat(took).as("six holds of 0.25 s").isGreaterThanOrEqualTo(Duration.ofMillis(1400));
  }

  @Test
  void aJobThatIsNotAPlaceholderIsNotAskedAbout() throws Exception {
    Path script = installed(self());
    epilog(script, Map.of("SLURM_JOB_COMMENT", "my training run"));
    epilog(script, Map.of("SLURM_JOB_COMMENT", ""));
    Files.writeString(dir.resolve("kse-node-epilog.conf"), "PLACEHOLDER_USERS=kse svc\n");
    epilog(script, Map.of("SLURM_JOB_USER", "alice")); // 22.05: no comment, the user says
    assertThat(asked).isEmpty();
    epilog(script, Map.of()); // the placeholders' user
    assertThat(asked).hasSize(1);
  }

  @Test
  void withNoExtenderListedOrNoneAnsweringAnUnknownJobIsNotHeld() throws Exception {
    Path none = installed();
    assertThat(epilog(none, PLACEHOLDER)).isLessThan(Duration.ofSeconds(2));
    Files.writeString(dir.resolve("kse-allocation-hint.d").resolve("gone"), "127.0.0.1 1\n");
    // 22.05 without PLACEHOLDER_USERS: whose job it is is unknown, and no one answers
    assertThat(epilog(none, Map.of())).isLessThan(Duration.ofSeconds(2));
  }

  @Test
  void aPlaceholderIsHeldThroughAnExtendersRestartButNotForever() throws Exception {
    Path script = installed("127.0.0.1 1", self()); // the first listed is down
    Files.writeString(dir.resolve("kse-node-epilog.conf"), "UNREACHABLE_MAX_S=1\nHOLD_MAX_S=2\n");
    status = 503; // not synced yet: asked again until the bound
    Duration unknown = epilog(script, PLACEHOLDER);
    assertThat(unknown).isBetween(Duration.ofMillis(900), Duration.ofSeconds(10));
    status = 200;
    holdsLeft.set(1_000); // a pod that never goes: let go at HOLD_MAX_S
    Duration bounded = epilog(script, PLACEHOLDER);
    assertThat(bounded).isBetween(Duration.ofMillis(1900), Duration.ofSeconds(10));
  }

  @Test
  void otherContextsAndOddNamesDoNothing() throws Exception {
    Path script = installed(self());
    epilog(script, Map.of("SLURM_SCRIPT_CONTEXT", "prolog_slurmd"));
    epilog(script, Map.of("SLURMD_NODENAME", "gpu node;rm"));
    epilog(script, Map.of("SLURM_JOB_ID", "7;x"));
    assertThat(asked).isEmpty();
  }
}
