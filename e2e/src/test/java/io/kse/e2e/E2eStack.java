package io.kse.e2e;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.kse.slurm.SlurmClient;
import io.kse.slurm.SlurmClients;
import io.kse.slurm.SlurmConfig;
import io.kse.slurm.testing.LocalSlurmCluster;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The system under test: either the local stack that {@code e2e/cluster/stack} starts (the default;
 * every scenario may also restart its parts) or an existing cluster given by {@code
 * KSE_E2E_KUBECONFIG} + {@code KSE_E2E_SLURM_URL} (+ {@code KSE_E2E_SLURM_USER}, {@code
 * KSE_E2E_SLURM_JWT_FILE}, and {@code SLURM_CONF} for the Slurm CLI), where scenarios that must
 * stop components are skipped.
 */
public final class E2eStack {
  private static E2eStack shared;

  private final Map<String, String> env;
  private final boolean managed;
  private final KubernetesClient kube;
  private final SlurmClient slurm;

  private E2eStack(Map<String, String> env, boolean managed) {
    this.env = env;
    this.managed = managed;
    this.kube =
        new KubernetesClientBuilder()
            .withConfig(Config.fromKubeconfig(read(Path.of(env("KUBECONFIG")))))
            .build();
    this.slurm =
        SlurmClients.connect(
            SlurmConfig.of(
                URI.create(env("KSE_LAB_REST_URL")),
                Optional.ofNullable(env.get("KSE_LAB_JWT_USER")),
                Path.of(env("KSE_LAB_JWT_FILE"))),
            new SimpleMeterRegistry());
  }

  /** Starts (or reuses) the local stack once per JVM, or connects to the given cluster. */
  public static synchronized E2eStack shared() {
    if (shared == null) {
      String kubeconfig = System.getenv("KSE_E2E_KUBECONFIG");
      if (kubeconfig != null && !kubeconfig.isBlank()) {
        Map<String, String> env = new LinkedHashMap<>();
        env.put("KUBECONFIG", kubeconfig);
        env.put("KSE_LAB_REST_URL", required("KSE_E2E_SLURM_URL"));
        env.put("KSE_LAB_JWT_FILE", required("KSE_E2E_SLURM_JWT_FILE"));
        Optional.ofNullable(System.getenv("KSE_E2E_SLURM_USER"))
            .ifPresent(u -> env.put("KSE_LAB_JWT_USER", u));
        Optional.ofNullable(System.getenv("SLURM_CONF")).ifPresent(c -> env.put("SLURM_CONF", c));
        shared = new E2eStack(env, false);
      } else {
        run(Duration.ofMinutes(40), "start");
        shared = new E2eStack(LocalSlurmCluster.parseEnv(run(Duration.ofSeconds(30), "env")), true);
        shared.clearLeftovers();
        // the extender of a reused stack may run an older build, or an image (a stack remembers
        // the image it ran): serve this one — the jar unless this run was given an image
        run(Duration.ofMinutes(1), "extender-stop");
        run(Duration.ofMinutes(1), "replica-stop"); // a soak's second replica, left by a crash
        String image = System.getenv().getOrDefault("KSE_E2E_EXTENDER_IMAGE", "");
        run(
            Duration.ofMinutes(3),
            image.isBlank()
                ? new String[] {"extender-start", "--extender-jar"}
                : new String[] {"extender-start"});
      }
    }
    return shared;
  }

  /** A reused stack may hold an earlier run's namespaces and jobs: start from an idle pool. */
  private void clearLeftovers() {
    kube.namespaces().list().getItems().stream()
        .map(n -> n.getMetadata().getName())
        .filter(n -> n.startsWith("e2e-"))
        .forEach(n -> kube.namespaces().withName(n).delete());
    slurmCluster().cancelAll();
  }

  /** True when this suite started the stack and may stop and restart its parts. */
  public boolean managed() {
    return managed;
  }

  public KubernetesClient kube() {
    return kube;
  }

  /** slurmrestd through the bridge's own client (unprivileged token user). */
  public SlurmClient slurm() {
    return slurm;
  }

  /** The local Slurm cluster's control commands (CLI, outages); managed stacks only. */
  public LocalSlurmCluster slurmCluster() {
    return LocalSlurmCluster.attach(Path.of(env("KSE_LAB_DIR")));
  }

  public List<String> gpuNodes() {
    return Arrays.asList(env("KSE_E2E_GPU_NODES").split(","));
  }

  public List<String> cpuNodes() {
    String v = env.getOrDefault("KSE_E2E_CPU_NODES", "");
    return v.isBlank() ? List.of() : Arrays.asList(v.split(","));
  }

  /** The stack's directory (its env, configs and the policy file every replica reads). */
  public Path dir() {
    return Path.of(env.getOrDefault("KSE_E2E_DIR", "/tmp/kse-e2e"));
  }

  public Path logDir() {
    return Path.of(env.getOrDefault("KSE_E2E_LOG_DIR", "target/e2e-logs"));
  }

  public URI extenderUrl() {
    return URI.create(env.getOrDefault("KSE_E2E_EXTENDER_URL", "http://127.0.0.1:8889"));
  }

  /**
   * Starts Knative Serving's four components on the local stack (built by e2e/cluster/build), once;
   * a running Knative is reused.
   */
  public void startKnative() {
    run(Duration.ofMinutes(3), "knative-start");
  }

  /** Sends SIGKILL to the extender: no shutdown hook, no lease release. */
  public void killExtender() {
    run(Duration.ofSeconds(30), "extender-kill");
  }

  /** Stops the extender as a pod's termination would (SIGTERM: it releases the writer Lease). */
  public void stopExtender() {
    run(Duration.ofSeconds(60), "extender-stop");
  }

  /** Starts the extender again and waits until it is ready. */
  public void startExtender() {
    run(Duration.ofMinutes(3), "extender-start");
  }

  /** The replicas {@link #startReplica} may add to the first: "" (the first) and "b". */
  public static final List<String> REPLICAS = List.of("", "b");

  /**
   * Starts the Deployment's second pod: a kube-scheduler standing by on the kse-scheduler Lease and
   * extender replica b, which competes for the writer Lease (stack replica-start).
   */
  public void startReplica() {
    run(Duration.ofMinutes(3), "replica-start");
  }

  public void stopReplica() {
    run(Duration.ofMinutes(1), "replica-stop");
  }

  /** SIGKILL to one replica's extender ("" the first, "b" the second). */
  public void killExtender(String replica) {
    run(Duration.ofSeconds(30), replicaCommand("extender-kill", replica));
  }

  public void startExtender(String replica) {
    run(Duration.ofMinutes(3), replicaCommand("extender-start", replica));
  }

  private static String[] replicaCommand(String command, String replica) {
    return replica.isEmpty()
        ? new String[] {command}
        : new String[] {command, "--replica", replica};
  }

  /** One replica's ops endpoint (/metrics, /readyz). */
  public URI extenderUrl(String replica) {
    return replica.isEmpty()
        ? extenderUrl()
        : URI.create(env.getOrDefault("KSE_E2E_EXTENDER_B_URL", "http://127.0.0.1:8891"));
  }

  /**
   * The first sample of an unlabelled metric one replica exports now; empty when the replica does
   * not answer (stopped, killed) or does not export it.
   */
  public Optional<Double> extenderMetric(String replica, String name) {
    return extenderMetrics(replica)
        .flatMap(
            body ->
                body.lines()
                    .filter(l -> l.startsWith(name + " "))
                    .map(l -> Double.parseDouble(l.substring(l.indexOf(' ') + 1).trim()))
                    .findFirst());
  }

  /** One replica's /metrics (Prometheus text); empty when it does not answer. */
  public Optional<String> extenderMetrics(String replica) {
    try {
      return Optional.of(
          java.net.http.HttpClient.newHttpClient()
              .send(
                  java.net.http.HttpRequest.newBuilder(extenderUrl(replica).resolve("/metrics"))
                      .timeout(Duration.ofSeconds(5))
                      .build(),
                  java.net.http.HttpResponse.BodyHandlers.ofString())
              .body());
    } catch (java.io.IOException e) {
      return Optional.empty();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return Optional.empty();
    }
  }

  /**
   * Switches the slurm-inference kube-scheduler's calls to the extender to HTTPS with client
   * certificates (on) or back to loopback HTTP (off); restarts both and waits until ready.
   */
  public void verbsTls(boolean on) {
    run(Duration.ofMinutes(3), "verbs-tls", on ? "on" : "off");
  }

  /** A setting the stack writes only in some configurations (e.g. its Prometheus URL). */
  public Optional<String> envIfSet(String key) {
    return Optional.ofNullable(env.get(key));
  }

  public String env(String key) {
    String v = env.get(key);
    if (v == null) {
      throw new IllegalStateException("the e2e stack's environment has no " + key);
    }
    return v;
  }

  /** The repository's root (found from testing/slurm/slurm-cluster). */
  public static Path repo() {
    return LocalSlurmCluster.script().getParent().getParent().getParent();
  }

  /** Runs {@code e2e/cluster/stack COMMAND}; returns its stdout. */
  private static String run(Duration timeout, String... command) {
    List<String> cmd =
        new java.util.ArrayList<>(List.of(repo().resolve("e2e/cluster/stack").toString()));
    cmd.addAll(List.of(command));
    return LocalSlurmCluster.run(cmd, timeout, Map.of());
  }

  private static String read(Path file) {
    try {
      return Files.readString(file, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new IllegalStateException("cannot read " + file, e);
    }
  }

  private static String required(String key) {
    String v = System.getenv(key);
    if (v == null || v.isBlank()) {
      throw new IllegalStateException(key + " is required when KSE_E2E_KUBECONFIG is set");
    }
    return v;
  }
}
