package io.kse.extender;

import io.kse.slurm.JobSubmission;
import io.kse.slurm.SlurmConfig;
import io.kse.slurm.settings.Settings;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

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
    DrainVia drainVia,
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

  /** How cordons reach Slurm: {@code rest} (v0.0.41+), {@code scontrol} (22.05), or off. */
  public enum DrainVia {
    REST,
    SCONTROL,
    OFF
  }

  public static ExtenderConfig fromEnv(Map<String, String> env) {
    // every KSE_* name is ours: the extender's, the bridge's (KSE_SLURM_*), or an error; test
    // harness variables (KSE_LAB_*) are not accepted in production either
    java.util.Set<String> known = new java.util.HashSet<>(VARIABLES.keySet());
    known.addAll(SlurmConfig.VARIABLES.keySet());
    Settings r = new Settings(env).refuseUnknown("KSE_", known);
    SlurmConfig slurm = SlurmConfig.read(r);
    String host = r.string("KSE_HTTP_HOST", "127.0.0.1");
    int port = r.integer("KSE_HTTP_PORT", 8888, 1, 65535);
    String scheduler = r.string("KSE_SCHEDULER_NAME", "slurm-inference");
    Path policy = r.required("KSE_POLICY_FILE", Path::of);
    Duration reload = r.millis("KSE_POLICY_RELOAD_MS", 5000, 100, 3_600_000);
    List<String> tlsNames =
        List.of("KSE_HTTP_TLS_CERT_FILE", "KSE_HTTP_TLS_KEY_FILE", "KSE_HTTP_TLS_CLIENT_CA_FILE");
    List<Path> tlsFiles = tlsNames.stream().map(r::path).flatMap(Optional::stream).toList();
    Optional<io.kse.extender.http.TlsFiles> tls = Optional.empty();
    if (tlsFiles.size() == 3) {
      io.kse.extender.http.TlsFiles t =
          new io.kse.extender.http.TlsFiles(tlsFiles.get(0), tlsFiles.get(1), tlsFiles.get(2));
      t.problems().forEach(r::problem);
      tls = Optional.of(t);
    } else if (!tlsFiles.isEmpty()) {
      r.problem(tlsNames + ": set all three for HTTPS with client certificates, or none");
    }
    boolean plaintext = r.bool("KSE_HTTP_PLAINTEXT_ON_NETWORK", false);
    if (tls.isEmpty() && !plaintext && !io.kse.extender.http.ExtenderServer.isLoopback(host)) {
      r.problem(
          "KSE_HTTP_HOST="
              + host
              + ": the verbs bind pods; off loopback they need TLS with client certificates"
              + " (KSE_HTTP_TLS_*), or KSE_HTTP_PLAINTEXT_ON_NETWORK=true to accept the risk");
    }
    int opsPort = r.integer("KSE_OPS_PORT", 8889, 0, 65535);
    if (opsPort != 0 && opsPort == port) {
      r.problem("KSE_OPS_PORT=" + opsPort + ": must differ from KSE_HTTP_PORT");
    }
    Http http =
        new Http(
            r.string("KSE_OPS_HOST", "0.0.0.0"),
            opsPort,
            tls,
            r.number("KSE_HTTP_BODY_LIMIT_BYTES", 8 << 20, 1024, 256 << 20),
            r.number("KSE_HTTP_INFLIGHT_BYTES", 64 << 20, 1024, Integer.MAX_VALUE),
            r.integer("KSE_HTTP_MAX_CONNECTIONS", 256, 1, 65_536),
            r.millis("KSE_HTTP_BODY_TIMEOUT_MS", 10_000, 100, 600_000),
            r.millis("KSE_HTTP_IDLE_TIMEOUT_MS", 120_000, 1000, 3_600_000),
            r.integer("KSE_HTTP_VERB_THREADS", 2, 1, 64),
            r.integer("KSE_HTTP_QUEUED_VERBS", 64, 1, 100_000),
            r.integer("KSE_HTTP_MIN_NODE_NAMES", 1000, 1, 1_000_000));
    if (http.inFlightBytes() < http.bodyBytes()) {
      r.problem(
          "KSE_HTTP_INFLIGHT_BYTES="
              + http.inFlightBytes()
              + ": must be at least KSE_HTTP_BODY_LIMIT_BYTES ("
              + http.bodyBytes()
              + ")");
    }
    JobSubmission.Shape shape =
        r.choice("KSE_PLACEHOLDER_SHAPE", JobSubmission.Shape.BATCH, JobSubmission.Shape.class);
    int workers = r.integer("KSE_WORKERS", 8, 1, 256);
    boolean fieldSelector = r.bool("KSE_POD_FIELD_SELECTOR", true);
    boolean leader = r.bool("KSE_LEADER_ELECTION", true);
    DrainVia drainVia = r.choice("KSE_DRAIN_VIA", DrainVia.REST, DrainVia.class);
    Optional<String> scontrolConf = r.optional("KSE_SCONTROL_CONF", x -> x);
    if (drainVia == DrainVia.SCONTROL && scontrolConf.isEmpty()) {
      r.problem("KSE_SCONTROL_CONF: required when KSE_DRAIN_VIA=scontrol");
    }
    Duration pdbOverride = r.millis("KSE_PDB_OVERRIDE_MS", 60_000, 0, 86_400_000);
    r.throwIfAny("invalid settings");
    return new ExtenderConfig(
        host,
        port,
        scheduler,
        policy,
        reload,
        http,
        r.string("KSE_PLACEHOLDER_WORKDIR", "/tmp"),
        shape,
        workers,
        r.optional("KSE_NAMESPACE", x -> x),
        fieldSelector,
        leader,
        r.string("KSE_LEASE_NAMESPACE", env.getOrDefault("POD_NAMESPACE", "default")),
        r.string("KSE_LEASE_NAME", "kube-slurm-extender"),
        drainVia,
        scontrolConf,
        pdbOverride,
        slurm);
  }
}
