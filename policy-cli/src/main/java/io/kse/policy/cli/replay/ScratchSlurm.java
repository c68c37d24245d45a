package io.kse.policy.cli.replay;

import io.kse.policy.SlurmRenderer;
import io.kse.policy.model.ClusterSpec;
import io.kse.policy.model.Policy;
import io.kse.policy.replay.TimeScale;
import io.kse.slurm.SlurmConfig;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * A throw-away Slurm 26.05 for a replay: {@code testing/slurm/slurm-cluster} with one slurmd node
 * and {@code nodes} GPU nodes made {@code state=external} (no slurmd: thousands fit on one
 * machine), whose partitions are then made what the policy renders ({@code render-slurm}), with
 * their grace times compressed by the replay's speed. Only external jobs run on external nodes, and
 * Slurm preempts them (seen live on 26.05.5: the victim ends PREEMPTED; an external job has no
 * batch script, so REQUEUE cannot restart it and the replay resubmits it).
 */
public final class ScratchSlurm implements AutoCloseable {
  /** slurm-cluster's GPU nodes: 8 GPUs each, NVLink domains (leaf switches) of 4 nodes. */
  public static final int GPUS_PER_NODE = 8;

  static final int DOMAIN_SIZE = 4;

  private final Path script;
  private final Path dir;
  private final Map<String, String> env;
  private final int nodes;

  private ScratchSlurm(Path script, Path dir, Map<String, String> env, int nodes) {
    this.script = script;
    this.dir = dir;
    this.env = env;
    this.nodes = nodes;
  }

  /**
   * Starts (or reuses, same shape) the scratch cluster in {@code dir}.
   *
   * @param script testing/slurm/slurm-cluster of this repository
   * @param portOffset added to slurm-cluster's ports, so a replay can run beside other clusters
   */
  public static ScratchSlurm start(Path script, Path dir, int nodes, int portOffset) {
    if (nodes < 1 || nodes > 10_000) {
      throw new IllegalArgumentException(
          "a replay's cluster has 1 to 10,000 GPU nodes, got " + nodes);
    }
    String out =
        run(
            List.of(
                script.toString(),
                "start",
                "--dir",
                dir.toString(),
                "--slurm",
                "26.05",
                "--nodes",
                "1",
                "--external-nodes",
                Integer.toString(nodes),
                "--rest-port",
                Integer.toString(16920 + portOffset),
                "--base-port",
                Integer.toString(17920 + portOffset)),
            Map.of(),
            600);
    Map<String, String> env = new LinkedHashMap<>();
    for (String line : out.split("\n")) {
      int eq = line.indexOf('=');
      if (eq > 0 && (line.startsWith("KSE_") || line.startsWith("SLURM_CONF="))) {
        env.put(line.substring(0, eq), line.substring(eq + 1));
      }
    }
    if (!env.containsKey("KSE_LAB_REST_URL")) {
      throw new IllegalStateException("slurm-cluster start printed no KSE_LAB_REST_URL:\n" + out);
    }
    return new ScratchSlurm(script, dir, env, nodes);
  }

  /** The external nodes' names, as Slurm's host list. */
  public String nodeList() {
    return "ext-gpu-[0-" + (nodes - 1) + "]";
  }

  public int nodes() {
    return nodes;
  }

  /** The bridge's settings for our placeholders (the {@code kse} user, as the extender runs). */
  public SlurmConfig placeholderUser() {
    return SlurmConfig.of(
        URI.create(env.get("KSE_LAB_REST_URL")),
        Optional.of(env.get("KSE_LAB_JWT_USER")),
        Path.of(env.get("KSE_LAB_JWT_FILE")));
  }

  /** The bridge's settings for other users' jobs (root's token, as a portal submits). */
  public SlurmConfig otherUsers() {
    return SlurmConfig.of(
        URI.create(env.get("KSE_LAB_REST_URL")),
        Optional.of("root"),
        Path.of(env.get("KSE_LAB_JWT_ROOT_FILE")));
  }

  /**
   * Makes the partitions what the policy renders, over every external node, grace times scaled;
   * gives the nodes the policy's NVLink-domain features (domain i of 4 nodes: the i-th feature,
   * round robin). Returns what the compression floored, for the report.
   */
  public List<String> configure(Policy policy, TimeScale scale) {
    if (policy.cluster().preemptMode() != ClusterSpec.PreemptMode.PARTITION) {
      throw new IllegalArgumentException(
          "replay runs policies with cluster.preemptMode: partition for now; this policy uses "
              + policy.cluster().preemptMode().name().toLowerCase()
              + " (QoS preemption needs slurmdbd in the scratch cluster, not built yet)");
    }
    List<String> floored = new ArrayList<>();
    for (SlurmRenderer.PartitionLine p : SlurmRenderer.partitions(policy)) {
      TimeScale.SlurmSeconds grace = scale.slurm(p.graceTime());
      if (grace.floored()) {
        floored.add(
            "partition "
                + p.name()
                + " GraceTime "
                + p.graceTime().getSeconds()
                + " s became 1 s (Slurm's resolution)");
      }
      List<String> settings =
          List.of(
              "nodes=" + nodeList(),
              "prioritytier=" + p.priorityTier(),
              "preemptmode=" + (p.preemptible() ? "requeue" : "off"),
              "gracetime=" + grace.seconds(),
              "maxtime=infinite",
              "state=up");
      // the partitions slurm-cluster's slurm.conf names are updated; the policy's others created
      boolean exists = !scontrol("show", "partition", p.name()).isEmpty();
      List<String> cmd =
          new ArrayList<>(
              List.of("scontrol", exists ? "update" : "create", "partitionname=" + p.name()));
      cmd.addAll(settings);
      cli(cmd);
    }
    List<String> domains = policy.cluster().nvlinkDomainFeatures();
    for (int first = 0; first < nodes; first += DOMAIN_SIZE) {
      int last = Math.min(nodes, first + DOMAIN_SIZE) - 1;
      String features =
          "external"
              + (domains.isEmpty()
                  ? ""
                  : "," + domains.get((first / DOMAIN_SIZE) % domains.size()));
      cli(
          List.of(
              "scontrol",
              "update",
              "nodename=ext-gpu-[" + first + "-" + last + "]",
              "availablefeatures=" + features,
              "activefeatures=" + features));
    }
    return floored;
  }

  /** Cancels every job (between two replays) and waits until none holds a node. */
  public void cancelAll() {
    run(List.of(script.toString(), "cancel-all", "--dir", dir.toString()), Map.of(), 120);
  }

  private String scontrol(String... args) {
    List<String> cmd = new ArrayList<>(List.of("scontrol"));
    cmd.addAll(List.of(args));
    try {
      return cli(cmd);
    } catch (IllegalStateException e) {
      return "";
    }
  }

  private String cli(List<String> args) {
    List<String> cmd = new ArrayList<>(args);
    String bin = env.getOrDefault("KSE_LAB_BIN", "");
    if (!bin.isBlank() && Files.isExecutable(Path.of(bin, args.get(0)))) {
      cmd.set(0, Path.of(bin, args.get(0)).toString()); // 26.05's command, in its chroot
    }
    return run(cmd, Map.of("SLURM_CONF", env.get("SLURM_CONF")), 120);
  }

  @Override
  public void close() {
    run(List.of(script.toString(), "stop", "--dir", dir.toString()), Map.of(), 300);
  }

  /** Runs a command to completion; its stdout, or an exception with its stderr. */
  static String run(List<String> cmd, Map<String, String> extraEnv, int timeoutSeconds) {
    try {
      Path err = Files.createTempFile("kse-replay", ".err");
      ProcessBuilder pb = new ProcessBuilder(cmd);
      pb.environment().remove("SLURM_JWT"); // a CLI would authenticate with it
      pb.environment().putAll(extraEnv);
      Process p =
          pb.redirectError(err.toFile())
              .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
              .start();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        throw new IllegalStateException(cmd + " did not finish in " + timeoutSeconds + " s");
      }
      String error = Files.readString(err);
      Files.deleteIfExists(err);
      if (p.exitValue() != 0) {
        throw new IllegalStateException(
            String.join(" ", cmd) + " failed (exit " + p.exitValue() + "): " + error.strip());
      }
      return out;
    } catch (IOException e) {
      throw new IllegalStateException("cannot run " + cmd + ": " + e.getMessage(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted running " + cmd, e);
    }
  }
}
