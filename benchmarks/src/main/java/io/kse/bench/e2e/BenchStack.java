package io.kse.bench.e2e;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The e2e stack a benchmark runs against: its env file ({@code e2e/cluster/stack env}), an admin
 * Kubernetes client, and the stack script's commands. Shared by the end-to-end and memory tiers.
 */
public final class BenchStack {
  private final Map<String, String> env;
  private final String script;

  private BenchStack(Map<String, String> env, String script) {
    this.env = env;
    this.script = script;
  }

  /** {@code --key value} pairs. */
  public static Map<String, String> args(String[] args) {
    Map<String, String> a = new LinkedHashMap<>();
    for (int i = 0; i + 1 < args.length; i += 2) {
      a.put(args[i].replaceFirst("^--", ""), args[i + 1]);
    }
    return a;
  }

  /** The stack named by the {@code env} (its env file) and {@code stack} (the script) arguments. */
  public static BenchStack from(Map<String, String> args) {
    Map<String, String> env = new LinkedHashMap<>();
    for (String l : read(Path.of(args.get("env"))).split("\n")) {
      int eq = l.indexOf('=');
      if (eq > 0) {
        env.put(l.substring(0, eq), l.substring(eq + 1));
      }
    }
    return new BenchStack(env, args.get("stack"));
  }

  public String env(String key) {
    String v = env.get(key);
    if (v == null) {
      throw new IllegalStateException("the stack's env file has no " + key);
    }
    return v;
  }

  /** A client with the stack's admin kubeconfig. */
  public KubernetesClient kube() {
    return new KubernetesClientBuilder()
        .withConfig(Config.fromKubeconfig(read(Path.of(env("KUBECONFIG")))))
        .build();
  }

  /** {@code e2e/cluster/stack COMMAND --dir DIR}, e.g. extender-stop. */
  public void command(String command) {
    exec(List.of(script, command, "--dir", env("KSE_E2E_DIR")), Map.of());
  }

  /** Runs a command to completion (no SLURM_JWT inherited); its output, or a failure with it. */
  public static String exec(List<String> cmd, Map<String, String> extraEnv) {
    try {
      ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
      pb.environment().remove("SLURM_JWT");
      pb.environment().putAll(extraEnv);
      Process p = pb.start();
      String out = new String(p.getInputStream().readAllBytes());
      if (!p.waitFor(5, TimeUnit.MINUTES) || p.exitValue() != 0) {
        throw new IllegalStateException(cmd + " failed: " + out);
      }
      return out;
    } catch (IOException e) {
      throw new IllegalStateException("cannot run " + cmd, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted: " + cmd, e);
    }
  }

  private static String read(Path f) {
    try {
      return Files.readString(f);
    } catch (IOException e) {
      throw new IllegalStateException("cannot read " + f, e);
    }
  }

  /** A client of the stack's slurmrestd, as the extender connects. */
  public io.kse.slurm.SlurmClient slurm() {
    return io.kse.slurm.SlurmClients.connect(
        io.kse.slurm.SlurmConfig.of(
            java.net.URI.create(env("KSE_LAB_REST_URL")),
            java.util.Optional.of(env("KSE_LAB_JWT_USER")),
            Path.of(env("KSE_LAB_JWT_FILE"))),
        new io.micrometer.core.instrument.simple.SimpleMeterRegistry());
  }

  /** A placeholder-shaped job of {@code gpus} GPUs in the inference partition, as ours are. */
  public io.kse.slurm.JobSubmission.Builder placeholderJob(
      String namespace, String name, int gpus) {
    return io.kse.slurm.JobSubmission.builder(
            new io.kse.slurm.PlaceholderTag(
                namespace, name, java.util.UUID.randomUUID().toString()))
        .partition("inference")
        .gresPerNode("gpu:h100:" + gpus)
        .cpusPerNode(1)
        .memoryPerNodeMb(1024)
        .workingDirectory(env("KSE_LAB_JOB_DIR"));
  }

  /** A Slurm command of the stack's version (a newer Slurm's is a chroot wrapper). */
  public String slurmCommand(String name) {
    String bin = env("KSE_LAB_BIN");
    return bin.isBlank() ? name : Path.of(bin, name).toString();
  }

  /** Cancels jobs with scancel (root, munge), 200 per call: one RPC per batch. */
  public void scancel(List<Long> ids) {
    for (int i = 0; i < ids.size(); i += 200) {
      List<String> cmd = new java.util.ArrayList<>(List.of(slurmCommand("scancel")));
      ids.subList(i, Math.min(ids.size(), i + 200)).forEach(id -> cmd.add(Long.toString(id)));
      exec(cmd, Map.of("SLURM_CONF", env("SLURM_CONF")));
    }
  }
}
