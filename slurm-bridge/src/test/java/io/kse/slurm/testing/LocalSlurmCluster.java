package io.kse.slurm.testing;

import io.kse.slurm.SlurmConfig;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * The real local Slurm cluster of {@code testing/slurm/slurm-cluster}, for {@code *IT} tests. Each
 * mode starts once per JVM (in its own directory and ports) and stops when the JVM exits. A cluster
 * that was already running (e.g. started by hand or by the e2e suite) is reused and left running.
 * The Slurm version is {@link #version()}: 22.05 (the host's) unless {@code KSE_LAB_SLURM} (or the
 * system property {@code kse.slurm}) names 24.11 or 26.05, each in its own directory and ports.
 */
public final class LocalSlurmCluster {
  public enum Mode {
    /** partition-priority preemption, no slurmdbd: fast to start. */
    PARTITION("/tmp/kse-it-slurm", 17100, 16820),
    /** MariaDB + slurmdbd, QoS tiers, preempt/qos. */
    ACCOUNTING("/tmp/kse-it-slurm-acct", 17300, 16830),
    /** One GPU node whose GPUs have 4 Slurm shards each (issue 46). */
    SHARDS("/tmp/kse-it-slurm-shards", 17500, 16845),
    /** One GPU node with 6 whole GPUs and 2 MIG-partitioned ones (issue 46). */
    MIG("/tmp/kse-it-slurm-mig", 17530, 16846);

    final String dir;
    final int basePort;
    final int restPort;

    Mode(String dir, int basePort, int restPort) {
      this.dir = dir;
      this.basePort = basePort;
      this.restPort = restPort;
    }
  }

  private static final Map<Mode, LocalSlurmCluster> STARTED = new ConcurrentHashMap<>();

  /** The Slurm version the ITs of this JVM run against. */
  public static String version() {
    String v = System.getProperty("kse.slurm", System.getenv("KSE_LAB_SLURM"));
    return v == null || v.isBlank() ? "22.05" : v.trim();
  }

  /** The REST version the bridge settles on with this Slurm (the newest both speak). */
  public static io.kse.slurm.ApiVersion expectedApiVersion() {
    return switch (version()) {
      case "24.11" -> io.kse.slurm.ApiVersion.V0042;
      case "26.05" -> io.kse.slurm.ApiVersion.V0045;
      default -> io.kse.slurm.ApiVersion.V0038;
    };
  }

  /** Whether this JVM's Slurm is the host's own 22.05 (accounting runs only there). */
  public static boolean hostSlurm() {
    return "22.05".equals(version());
  }

  /** The mode's directory for this JVM's Slurm version. */
  static String dir(Mode mode) {
    return hostSlurm() ? mode.dir : mode.dir + "-" + version();
  }

  /** Ports moved per version, so clusters of several versions can run side by side. */
  static int shift() {
    return switch (version()) {
      case "24.11" -> 1000;
      case "26.05" -> 2000;
      default -> 0;
    };
  }

  private final String dir;
  private final Map<String, String> env;

  private LocalSlurmCluster(String dir, Map<String, String> env) {
    this.dir = dir;
    this.env = env;
  }

  /**
   * A cluster that something else started in {@code dir} (the e2e stack): read from its env file,
   * never stopped by this object's creator.
   */
  public static LocalSlurmCluster attach(Path dir) {
    return new LocalSlurmCluster(dir.toString(), readEnv(dir.resolve("env")));
  }

  /** Starts (or reuses) the cluster of this mode with 8 nodes. */
  public static synchronized LocalSlurmCluster shared(Mode mode) {
    return STARTED.computeIfAbsent(mode, LocalSlurmCluster::start);
  }

  /** Held until this JVM exits: one test run per local cluster at a time. */
  private static final Map<Mode, java.nio.channels.FileLock> LOCKS = new ConcurrentHashMap<>();

  /**
   * Two test runs on one machine must not share a cluster silently (each cancels the other's jobs):
   * the second fails at once, naming what holds it.
   */
  private static void lock(Mode mode) {
    if (LOCKS.containsKey(mode)) {
      return; // this JVM holds it already (an earlier start failed after taking it)
    }
    Path lockFile = Path.of(dir(mode) + ".lock");
    try {
      java.nio.channels.FileChannel ch =
          java.nio.channels.FileChannel.open(
              lockFile,
              java.nio.file.StandardOpenOption.CREATE,
              java.nio.file.StandardOpenOption.WRITE);
      java.nio.channels.FileLock lock = ch.tryLock();
      if (lock == null) {
        ch.close();
        throw new IllegalStateException(
            "another test run is using the local Slurm cluster in "
                + dir(mode)
                + " (it holds "
                + lockFile
                + "); two runs would cancel each other's jobs: wait for it to finish");
      }
      LOCKS.put(mode, lock);
    } catch (IOException e) {
      throw new IllegalStateException("cannot lock " + lockFile + ": " + e.getMessage(), e);
    }
  }

  private static LocalSlurmCluster start(Mode mode) {
    lock(mode);
    boolean wasRunning = isRunning(mode);
    List<String> cmd =
        new java.util.ArrayList<>(
            List.of(
                script().toString(),
                "start",
                "--dir",
                dir(mode),
                "--nodes",
                mode == Mode.SHARDS || mode == Mode.MIG ? "1" : "8",
                "--base-port",
                Integer.toString(mode.basePort + shift()),
                "--rest-port",
                Integer.toString(mode.restPort + shift()),
                "--slurm",
                version()));
    if (mode == Mode.ACCOUNTING) {
      cmd.add("--accounting");
    }
    if (mode == Mode.SHARDS) {
      cmd.addAll(List.of("--gpu-shards", "4"));
    } else if (mode == Mode.MIG) {
      cmd.addAll(List.of("--mig-gpus", "2"));
    } else if ("26.05".equals(version())) { // nodes without slurmd, in a partition of their own
      cmd.addAll(List.of("--external-nodes", "2"));
    }
    run(cmd, Duration.ofMinutes(10));
    LocalSlurmCluster c = new LocalSlurmCluster(dir(mode), readEnv(Path.of(dir(mode), "env")));
    if (!wasRunning && !"1".equals(System.getenv("KSE_LAB_KEEP"))) {
      Runtime.getRuntime().addShutdownHook(new Thread(c::stop, "kse-slurm-stop-" + mode));
    }
    return c;
  }

  private static boolean isRunning(Mode mode) {
    try {
      Process p =
          new ProcessBuilder(script().toString(), "status", "--dir", dir(mode))
              .redirectErrorStream(true)
              .redirectOutput(ProcessBuilder.Redirect.DISCARD)
              .start();
      return p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0;
    } catch (IOException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /** {@code testing/slurm/slurm-cluster}, found from the module's or the repo's directory. */
  public static Path script() {
    Path dir = Path.of("").toAbsolutePath();
    while (dir != null) {
      Path s = dir.resolve("testing/slurm/slurm-cluster");
      if (Files.isExecutable(s)) {
        return s;
      }
      dir = dir.getParent();
    }
    throw new IllegalStateException(
        "testing/slurm/slurm-cluster not found above " + Path.of("").toAbsolutePath());
  }

  public String env(String key) {
    String v = env.get(key);
    if (v == null) {
      throw new IllegalStateException("cluster env has no " + key + ": " + env.keySet());
    }
    return v;
  }

  public URI restUrl() {
    return URI.create(env("KSE_LAB_REST_URL"));
  }

  public Path jobDir() {
    return Path.of(env("KSE_LAB_JOB_DIR"));
  }

  /** A placeholder submission for this cluster (its job directory), for a made-up pod. */
  public io.kse.slurm.JobSubmission.Builder placeholder(String podName) {
    return io.kse.slurm.JobSubmission.builder(
            new io.kse.slurm.PlaceholderTag("it", podName, java.util.UUID.randomUUID().toString()))
        .workingDirectory(jobDir().toString());
  }

  /**
   * Fills every node with one exclusive 8-GPU training job submitted by {@code sbatch} (partition
   * training, plus {@code extraArgs} such as {@code --qos=training}); returns the job ids. Does not
   * wait for them to start.
   */
  public List<Long> submitTrainingOnEveryNode(String... extraArgs) {
    int nodes = Integer.parseInt(env("KSE_LAB_NODES"));
    List<Long> ids = new java.util.ArrayList<>();
    for (int i = 0; i < nodes; i++) {
      List<String> cmd =
          new java.util.ArrayList<>(
              List.of(
                  "sbatch",
                  "--parsable",
                  "-p",
                  "training",
                  "--exclusive",
                  "-N1",
                  "--gres=gpu:h100:8",
                  "-J",
                  "train-" + i,
                  "-o",
                  "/dev/null",
                  "-D",
                  jobDir().toString()));
      cmd.addAll(List.of(extraArgs));
      cmd.addAll(List.of("--wrap", "sleep 3600"));
      ids.add(Long.parseLong(cli(cmd.toArray(String[]::new)).trim().split(";")[0]));
    }
    return ids;
  }

  /** A bridge config using the unprivileged token user. */
  public SlurmConfig config() {
    return SlurmConfig.of(
        restUrl(), Optional.of(env("KSE_LAB_JWT_USER")), Path.of(env("KSE_LAB_JWT_FILE")));
  }

  /** A bridge config with the root (operator) token: may set job priorities. */
  public SlurmConfig rootConfig() {
    return SlurmConfig.of(restUrl(), Optional.of("root"), Path.of(env("KSE_LAB_JWT_ROOT_FILE")));
  }

  /**
   * A root job of {@code partition} on {@code node} asking {@code gres} for 5 minutes (it sleeps);
   * its id. Root's job: cancel it with {@link #cli} {@code scancel}.
   */
  public long sbatchOn(String partition, String node, String gres) {
    String out =
        cli(
            "sbatch",
            "--parsable",
            "-p",
            partition,
            "-w",
            node,
            "--gres=" + gres,
            "-t",
            "5",
            // its output nowhere and its directory the lab's: never a slurm-N.out in the checkout
            "-o",
            "/dev/null",
            "-D",
            jobDir().toString(),
            "--wrap",
            "sleep 300");
    return Long.parseLong(out.trim().split(";")[0]);
  }

  /** Runs a Slurm CLI command against this cluster (munge auth, as root); returns stdout. */
  public String cli(String... args) {
    Map<String, String> extra = new LinkedHashMap<>();
    extra.put("SLURM_CONF", env("SLURM_CONF"));
    List<String> cmd = new java.util.ArrayList<>(List.of(args));
    String bin = env.getOrDefault("KSE_LAB_BIN", "");
    if (!bin.isBlank() && Files.isExecutable(Path.of(bin, args[0]))) {
      // a newer Slurm's command, chrooted in its root (ProcessBuilder looks programs up on this
      // JVM's PATH, so the wrapper is named by its path)
      cmd.set(0, Path.of(bin, args[0]).toString());
    }
    return run(cmd, Duration.ofSeconds(60), extra);
  }

  /**
   * Returns a node set down or drained to service. A node DOWN for not answering is back on its own
   * once its slurmd registers again (ReturnToService=1; 26.05 within moments of a resumed daemon),
   * and resuming a node already back is "Invalid node state transition": that is no failure here.
   */
  public void resumeNode(String node) {
    try {
      cli("scontrol", "update", "nodename=" + node, "state=resume");
    } catch (IllegalStateException e) {
      String state = cli("sinfo", "-h", "-N", "-n", node, "-o", "%T").trim().toLowerCase();
      // 22.05 words it "Invalid node state specified"
      if (!e.getMessage().contains("Invalid node state")
          || state.startsWith("down")
          || state.startsWith("drain")) {
        throw e;
      }
    }
  }

  /** Stops only slurmrestd (outage tests); {@link #startRest} brings it back. */
  public void stopRest() {
    run(List.of(script().toString(), "rest-stop", "--dir", dir), Duration.ofSeconds(30));
  }

  public void startRest() {
    run(
        List.of(
            script().toString(),
            "rest-start",
            "--dir",
            dir,
            "--rest-port",
            Integer.toString(restUrl().getPort())),
        Duration.ofSeconds(30));
  }

  /** Stops slurmctld only (outage tests); {@link #startController} restarts it with its state. */
  public void stopController() {
    run(List.of(script().toString(), "ctld-stop", "--dir", dir), Duration.ofSeconds(30));
  }

  public void startController() {
    run(List.of(script().toString(), "ctld-start", "--dir", dir), Duration.ofSeconds(60));
  }

  /**
   * {@code node} stops answering as a crashed node would (its slurmd and the job step daemons there
   * get SIGSTOP), or answers again ({@code stopped} false: SIGCONT). This cluster's daemons only:
   * node names and job ids repeat across the clusters of one machine.
   */
  public void freezeNode(String node, boolean stopped) {
    run(
        List.of(
            script().toString(),
            "node-signal",
            "--dir",
            dir,
            "--node",
            node,
            "--signal",
            stopped ? "STOP" : "CONT"),
        Duration.ofSeconds(30));
  }

  /** Cancels every job, so tests start from an idle cluster. */
  public void cancelAll() {
    run(List.of(script().toString(), "cancel-all", "--dir", dir), Duration.ofSeconds(60));
  }

  public void stop() {
    run(List.of(script().toString(), "stop", "--dir", dir), Duration.ofSeconds(90));
  }

  private static Map<String, String> readEnv(Path file) {
    try {
      return parseEnv(Files.readString(file, StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new IllegalStateException("cannot read " + file, e);
    }
  }

  /** KEY=VALUE lines, as the local stacks' env files and {@code env} commands print them. */
  public static Map<String, String> parseEnv(String text) {
    Map<String, String> out = new LinkedHashMap<>();
    for (String line : text.split("\n")) {
      int eq = line.indexOf('=');
      if (eq > 0) {
        out.put(line.substring(0, eq), line.substring(eq + 1));
      }
    }
    return out;
  }

  private static String run(List<String> cmd, Duration timeout) {
    return run(cmd, timeout, Map.of());
  }

  /**
   * Runs a command to completion (stdin empty, no SLURM_JWT inherited); returns stdout, throws with
   * stderr when it fails or outlives {@code timeout}. Shared with the e2e suite's stack control.
   */
  public static String run(List<String> cmd, Duration timeout, Map<String, String> extraEnv) {
    try {
      Path log = Files.createTempFile("kse-cmd", ".log");
      ProcessBuilder pb = new ProcessBuilder(cmd);
      // never a JWT in a Slurm CLI's environment: the CLI would authenticate with it
      pb.environment().remove("SLURM_JWT");
      pb.environment().putAll(extraEnv);
      Process p =
          pb.redirectErrorStream(false)
              .redirectError(log.toFile())
              .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
              .start();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
        p.destroyForcibly();
        throw new IllegalStateException(cmd + " timed out after " + timeout);
      }
      String err = Files.readString(log);
      Files.deleteIfExists(log);
      if (p.exitValue() != 0) {
        throw new IllegalStateException(cmd + " failed (" + p.exitValue() + "):\n" + err + out);
      }
      return out;
    } catch (IOException e) {
      throw new IllegalStateException("cannot run " + cmd, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted running " + cmd, e);
    }
  }
}
