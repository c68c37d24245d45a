package io.kse.extender;

import io.kse.slurm.JobSubmission;
import io.kse.slurm.SlurmConfig;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * Everything the service reads at start, from {@code KSE_*} environment variables (the Slurm ones
 * via {@link SlurmConfig}). Every problem is reported at once; unknown {@code KSE_*} names are
 * errors so a typo does not pass silently.
 */
public record ExtenderConfig(
    String host,
    int port,
    String schedulerName,
    Path policyFile,
    Duration policyReload,
    Http http,
    String placeholderWorkDir,
    JobSubmission.Shape placeholderShape,
    int workers,
    Optional<String> kubeNamespace,
    boolean podFieldSelector,
    boolean leaderElection,
    String leaseNamespace,
    String leaseName,
    String drainVia,
    Optional<String> scontrolConf,
    Duration pdbOverride,
    SlurmConfig slurm) {

  public static final Map<String, String> VARIABLES = variables();

  /**
   * The HTTP server's limits ({@link io.kse.extender.http.HttpLimits}): together they bound what
   * any mix of callers can make the service hold.
   */
  public record Http(
      String opsHost,
      int opsPort,
      Optional<io.kse.extender.http.TlsFiles> tls,
      long bodyBytes,
      long inFlightBytes,
      int maxConnections,
      Duration bodyTimeout,
      Duration idleTimeout,
      int verbThreads,
      int queuedVerbs,
      int nodeNamesFloor) {}

  private static Map<String, String> variables() {
    Map<String, String> v = new LinkedHashMap<>();
    v.put(
        "KSE_HTTP_HOST",
        "listen address of the verbs (filter/prioritize/preempt/bind) (default 127.0.0.1:"
            + " kube-scheduler runs in the same pod)");
    v.put("KSE_HTTP_PORT", "listen port of the verbs (default 8888)");
    v.put(
        "KSE_HTTP_TLS_CERT_FILE",
        "PEM certificate: serve the verbs over HTTPS (with KSE_HTTP_TLS_KEY_FILE and"
            + " KSE_HTTP_TLS_CLIENT_CA_FILE), for a kube-scheduler that runs apart");
    v.put("KSE_HTTP_TLS_KEY_FILE", "PEM private key of KSE_HTTP_TLS_CERT_FILE");
    v.put(
        "KSE_HTTP_TLS_CLIENT_CA_FILE",
        "PEM CA: only clients with a certificate it signed may call the verbs");
    v.put(
        "KSE_HTTP_PLAINTEXT_ON_NETWORK",
        "true: allow the verbs on a non-loopback address without TLS, so anyone who reaches the"
            + " port can bind pods (default false)");
    v.put(
        "KSE_OPS_HOST",
        "listen address of /healthz, /readyz, /metrics and /explain (default 0.0.0.0)");
    v.put(
        "KSE_OPS_PORT",
        "listen port of /healthz, /readyz, /metrics and /explain; /explain answers loopback"
            + " callers, others need a token allowed to get the pod (default 8889)");
    v.put(
        "KSE_SCHEDULER_NAME",
        "schedulerName of the pods this extender handles (default slurm-inference)");
    v.put("KSE_POLICY_FILE", "the placement policy YAML (required), e.g. a mounted ConfigMap");
    v.put(
        "KSE_POLICY_RELOAD_MS", "how often the policy file is checked for changes (default 5000)");
    v.put("KSE_HTTP_BODY_LIMIT_BYTES", "largest request body accepted (default 8388608)");
    v.put(
        "KSE_HTTP_INFLIGHT_BYTES",
        "request body bytes held at once over all connections; beyond, 503 (default 67108864)");
    v.put("KSE_HTTP_MAX_CONNECTIONS", "open connections; more are closed at once (default 256)");
    v.put(
        "KSE_HTTP_BODY_TIMEOUT_MS",
        "time for a whole request body to arrive; beyond, 408 and the connection closed"
            + " (default 10000)");
    v.put("KSE_HTTP_IDLE_TIMEOUT_MS", "idle connections are closed after this (default 120000)");
    v.put(
        "KSE_HTTP_VERB_THREADS",
        "threads computing filter/prioritize/preempt answers, off the event loop (default 2)");
    v.put(
        "KSE_HTTP_QUEUED_VERBS",
        "verb calls waiting for a thread; more are answered 503 (default 64)");
    v.put(
        "KSE_HTTP_MIN_NODE_NAMES",
        "a request may name as many candidate nodes as the cluster has plus 10% and 100, and at"
            + " least this many (default 1000)");
    v.put(
        "KSE_PLACEHOLDER_WORKDIR",
        "working directory of placeholder jobs on Slurm nodes (default /tmp)");
    v.put(
        "KSE_PLACEHOLDER_SHAPE",
        "batch (every Slurm) or external (slurmrestd v0.0.44) (default batch)");
    v.put("KSE_WORKERS", "threads for Slurm and API calls (default 8)");
    v.put("KSE_NAMESPACE", "only watch pods in this namespace (default: all)");
    v.put(
        "KSE_CONFIG_FILE", "YAML file of these same KSE_* settings; the environment overrides it");
    v.put(
        "KSE_LEADER_ELECTION",
        "true: only the Lease holder submits/cancels/evicts (run 2+ replicas);"
            + " false: this replica always does (default true)");
    v.put(
        "KSE_LEASE_NAMESPACE",
        "namespace of the writer Lease (default: POD_NAMESPACE, else default)");
    v.put("KSE_LEASE_NAME", "name of the writer Lease (default kube-slurm-extender)");
    v.put(
        "KSE_DRAIN_VIA",
        "how cordons drain Slurm nodes: rest (slurmrestd v0.0.41+), scontrol (needs"
            + " KSE_SCONTROL_CONF and munge), or off (default rest)");
    v.put(
        "KSE_PDB_OVERRIDE_MS",
        "how long a PodDisruptionBudget may hold off evicting a pod whose Slurm job ended before"
            + " the pod is deleted anyway: its GPUs already belong to another job (default 60000)");
    v.put("KSE_SCONTROL_CONF", "slurm.conf for scontrol, when KSE_DRAIN_VIA=scontrol");
    v.put(
        "KSE_LOG_LEVEL", "log level of the extender's own loggers (default INFO; read by logback)");
    v.put(
        "KSE_POD_FIELD_SELECTOR",
        "true: the API server selects pods by spec.schedulerName; false: select"
            + " in the extender, for servers without that field selector (default true)");
    return Map.copyOf(v);
  }

  public static ExtenderConfig fromEnv(Map<String, String> env) {
    List<String> problems = new ArrayList<>();
    env.keySet().stream()
        .filter(
            k ->
                k.startsWith("KSE_")
                    && !k.startsWith("KSE_SLURM_")
                    && !k.startsWith("KSE_LAB_")
                    && !VARIABLES.containsKey(k))
        .sorted()
        .forEach(
            k ->
                problems.add(
                    k
                        + ": unknown variable; known: "
                        + VARIABLES.keySet().stream().sorted().toList()));
    SlurmConfig slurm = null;
    try {
      slurm = SlurmConfig.fromEnv(env);
    } catch (IllegalArgumentException e) {
      problems.add(e.getMessage().replace("\n", " "));
    }
    String host = env.getOrDefault("KSE_HTTP_HOST", "127.0.0.1");
    int port = number(env, "KSE_HTTP_PORT", 8888, 1, 65535, problems);
    String scheduler = env.getOrDefault("KSE_SCHEDULER_NAME", "slurm-inference");
    Path policy =
        Optional.ofNullable(env.get("KSE_POLICY_FILE"))
            .filter(s -> !s.isBlank())
            .map(Path::of)
            .orElse(null);
    if (policy == null) {
      problems.add("KSE_POLICY_FILE: required");
    }
    long reload = number(env, "KSE_POLICY_RELOAD_MS", 5000, 100, 3_600_000, problems);
    List<String> tlsNames =
        List.of("KSE_HTTP_TLS_CERT_FILE", "KSE_HTTP_TLS_KEY_FILE", "KSE_HTTP_TLS_CLIENT_CA_FILE");
    long tlsSet = tlsNames.stream().filter(n -> !env.getOrDefault(n, "").isBlank()).count();
    Optional<io.kse.extender.http.TlsFiles> tls = Optional.empty();
    if (tlsSet == 3) {
      io.kse.extender.http.TlsFiles t =
          new io.kse.extender.http.TlsFiles(
              Path.of(env.get("KSE_HTTP_TLS_CERT_FILE")),
              Path.of(env.get("KSE_HTTP_TLS_KEY_FILE")),
              Path.of(env.get("KSE_HTTP_TLS_CLIENT_CA_FILE")));
      problems.addAll(t.problems());
      tls = Optional.of(t);
    } else if (tlsSet > 0) {
      problems.add(tlsNames + ": set all three for HTTPS with client certificates, or none");
    }
    boolean plaintext =
        parse(
            env,
            "KSE_HTTP_PLAINTEXT_ON_NETWORK",
            false,
            ExtenderConfig::bool,
            "true or false",
            problems);
    if (tls.isEmpty() && !plaintext && !io.kse.extender.http.ExtenderServer.isLoopback(host)) {
      problems.add(
          "KSE_HTTP_HOST="
              + host
              + ": the verbs bind pods; off loopback they need TLS with client certificates"
              + " (KSE_HTTP_TLS_*), or KSE_HTTP_PLAINTEXT_ON_NETWORK=true to accept the risk");
    }
    int opsPort = number(env, "KSE_OPS_PORT", 8889, 0, 65535, problems);
    if (opsPort != 0 && opsPort == port) {
      problems.add("KSE_OPS_PORT=" + opsPort + ": must differ from KSE_HTTP_PORT");
    }
    Http http =
        new Http(
            env.getOrDefault("KSE_OPS_HOST", "0.0.0.0"),
            opsPort,
            tls,
            number(env, "KSE_HTTP_BODY_LIMIT_BYTES", 8 << 20, 1024, 256 << 20, problems),
            number(env, "KSE_HTTP_INFLIGHT_BYTES", 64 << 20, 1024, Integer.MAX_VALUE, problems),
            number(env, "KSE_HTTP_MAX_CONNECTIONS", 256, 1, 65_536, problems),
            Duration.ofMillis(
                number(env, "KSE_HTTP_BODY_TIMEOUT_MS", 10_000, 100, 600_000, problems)),
            Duration.ofMillis(
                number(env, "KSE_HTTP_IDLE_TIMEOUT_MS", 120_000, 1000, 3_600_000, problems)),
            number(env, "KSE_HTTP_VERB_THREADS", 2, 1, 64, problems),
            number(env, "KSE_HTTP_QUEUED_VERBS", 64, 1, 100_000, problems),
            number(env, "KSE_HTTP_MIN_NODE_NAMES", 1000, 1, 1_000_000, problems));
    if (http.inFlightBytes() < http.bodyBytes()) {
      problems.add(
          "KSE_HTTP_INFLIGHT_BYTES="
              + http.inFlightBytes()
              + ": must be at least KSE_HTTP_BODY_LIMIT_BYTES ("
              + http.bodyBytes()
              + ")");
    }
    JobSubmission.Shape shape =
        parse(
            env,
            "KSE_PLACEHOLDER_SHAPE",
            JobSubmission.Shape.BATCH,
            s -> JobSubmission.Shape.valueOf(s.toUpperCase(java.util.Locale.ROOT)),
            "batch or external",
            problems);
    int workers = number(env, "KSE_WORKERS", 8, 1, 256, problems);
    boolean fieldSelector =
        parse(env, "KSE_POD_FIELD_SELECTOR", true, ExtenderConfig::bool, "true or false", problems);
    boolean leader =
        parse(env, "KSE_LEADER_ELECTION", true, ExtenderConfig::bool, "true or false", problems);
    String drainVia = env.getOrDefault("KSE_DRAIN_VIA", "rest");
    if (!java.util.Set.of("rest", "scontrol", "off").contains(drainVia)) {
      problems.add("KSE_DRAIN_VIA='" + drainVia + "': expected rest, scontrol or off");
    }
    Optional<String> scontrolConf =
        Optional.ofNullable(env.get("KSE_SCONTROL_CONF")).filter(x -> !x.isBlank());
    if (drainVia.equals("scontrol") && scontrolConf.isEmpty()) {
      problems.add("KSE_SCONTROL_CONF: required when KSE_DRAIN_VIA=scontrol");
    }
    long pdbOverride = number(env, "KSE_PDB_OVERRIDE_MS", 60_000, 0, 86_400_000, problems);
    if (!problems.isEmpty()) {
      throw new IllegalArgumentException(
          "invalid settings:\n  - " + String.join("\n  - ", problems));
    }
    return new ExtenderConfig(
        host,
        port,
        scheduler,
        policy,
        Duration.ofMillis(reload),
        http,
        env.getOrDefault("KSE_PLACEHOLDER_WORKDIR", "/tmp"),
        shape,
        workers,
        Optional.ofNullable(env.get("KSE_NAMESPACE")).filter(s -> !s.isBlank()),
        fieldSelector,
        leader,
        env.getOrDefault("KSE_LEASE_NAMESPACE", env.getOrDefault("POD_NAMESPACE", "default")),
        env.getOrDefault("KSE_LEASE_NAME", "kube-slurm-extender"),
        drainVia,
        scontrolConf,
        Duration.ofMillis(pdbOverride),
        slurm);
  }

  private static boolean bool(String s) {
    if (!s.equals("true") && !s.equals("false")) {
      throw new IllegalArgumentException();
    }
    return Boolean.parseBoolean(s);
  }

  private static int number(
      Map<String, String> env, String name, long dflt, long min, long max, List<String> problems) {
    return (int)
        (long)
            parse(
                env,
                name,
                dflt,
                s -> {
                  long v = Long.parseLong(s.trim());
                  if (v < min || v > max) {
                    throw new IllegalArgumentException();
                  }
                  return v;
                },
                "a whole number from " + min + " to " + max,
                problems);
  }

  private static <T> T parse(
      Map<String, String> env,
      String name,
      T dflt,
      Function<String, T> f,
      String expected,
      List<String> problems) {
    String raw = env.get(name);
    if (raw == null || raw.isBlank()) {
      return dflt;
    }
    try {
      return f.apply(raw.trim());
    } catch (RuntimeException e) {
      problems.add(name + "='" + raw + "': expected " + expected);
      return dflt;
    }
  }
}
