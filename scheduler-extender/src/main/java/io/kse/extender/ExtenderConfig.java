package io.kse.extender;

import io.kse.slurm.JobSubmission;
import io.kse.slurm.SlurmConfig;
import io.kse.slurm.settings.Setting;
import io.kse.slurm.settings.Settings;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Everything the service reads at start, from {@code KSE_*} environment variables (the Slurm ones
 * via {@link SlurmConfig}). Each setting is declared once below (name, meaning, default, how it is
 * read); every problem is reported at once; unknown {@code KSE_*} names are errors so a typo does
 * not pass silently.
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
    String leaseIdentity,
    DrainVia drainVia,
    boolean nodeLabelSync,
    Optional<String> scontrolConf,
    Duration pdbOverride,
    Duration groupIncompleteWait,
    Duration eventQuiet,
    int nominateFromNodes,
    int warmUpRounds,
    boolean podGroups,
    Optional<String> clusterId,
    Dra dra,
    AllocationHint allocationHint,
    SlurmConfig slurm) {

  /**
   * Slurm's "look now" (manifests/slurm/kse-allocation-hint, docs/install.md).
   *
   * @param token the bearer token a hint from anywhere but loopback must carry; none: loopback only
   * @param minGap the least time between two polls that hints ask for
   */
  public record AllocationHint(Optional<String> token, Duration minGap) {}

  /**
   * How pods' DRA ResourceClaims are served from Slurm's GPUs (docs/gpu-ownership.md).
   *
   * @param gpuDeviceClasses DeviceClasses whose requests are GPUs Slurm allocates
   * @param driver the DRA driver publishing the GPUs in ResourceSlices
   * @param indexAttribute the device attribute equal to Slurm's GPU index
   */
  public record Dra(java.util.Set<String> gpuDeviceClasses, String driver, String indexAttribute) {}

  /** How cordons reach Slurm: {@code rest} (v0.0.41+), {@code scontrol} (22.05), or off. */
  public enum DrainVia {
    REST,
    SCONTROL,
    OFF
  }

  static final Setting<String> SCHEDULER_NAME =
      Setting.string(
          "KSE_SCHEDULER_NAME",
          "schedulerName of the pods this extender handles",
          "slurm-inference");
  static final Setting<Path> POLICY_FILE =
      Setting.requiredPath(
          "KSE_POLICY_FILE", "the placement policy YAML, e.g. a mounted ConfigMap");
  static final Setting<Duration> POLICY_RELOAD =
      Setting.millis(
          "KSE_POLICY_RELOAD_MS",
          "how often the policy file is checked for changes",
          5000,
          100,
          3_600_000);
  static final Setting<String> WORKDIR =
      Setting.string(
          "KSE_PLACEHOLDER_WORKDIR",
          "working directory of placeholder jobs on Slurm nodes",
          "/tmp");
  static final Setting<JobSubmission.Shape> SHAPE =
      Setting.choice(
          "KSE_PLACEHOLDER_SHAPE",
          "batch (every Slurm) or external (slurmrestd v0.0.44+: Slurm 25.11 and later)",
          JobSubmission.Shape.BATCH,
          JobSubmission.Shape.class);
  static final Setting<Integer> WORKERS =
      Setting.integer("KSE_WORKERS", "threads for Slurm and API calls", 8, 1, 256);
  static final Setting<Optional<String>> NAMESPACE =
      Setting.optional("KSE_NAMESPACE", "only watch pods in this namespace", "all");
  static final Setting<Void> CONFIG_FILE =
      Setting.documented(
          "KSE_CONFIG_FILE",
          "YAML file of these same KSE_* settings; the environment overrides it",
          "");
  static final Setting<Boolean> LEADER_ELECTION =
      Setting.bool(
          "KSE_LEADER_ELECTION",
          "true: only the Lease holder submits/cancels/evicts (run 2+ replicas);"
              + " false: this replica always does",
          true);
  static final Setting<Optional<String>> LEASE_NAMESPACE =
      Setting.optional(
          "KSE_LEASE_NAMESPACE", "namespace of the writer Lease", "POD_NAMESPACE, else default");
  static final Setting<String> LEASE_NAME =
      Setting.string("KSE_LEASE_NAME", "name of the writer Lease", "kube-slurm-extender");
  static final Setting<DrainVia> DRAIN_VIA =
      Setting.choice(
          "KSE_DRAIN_VIA",
          "how cordons drain Slurm nodes: rest (slurmrestd v0.0.41+), scontrol (needs"
              + " KSE_SCONTROL_CONF and munge), or off",
          DrainVia.REST,
          DrainVia.class);
  static final Setting<Optional<Path>> ALLOCATION_HINT_TOKEN =
      Setting.path(
          "KSE_ALLOCATION_HINT_TOKEN_FILE",
          "file holding the token Slurm's allocation hints (PrologSlurmctld,"
              + " manifests/slurm/kse-allocation-hint) must carry unless they come from loopback;"
              + " unset: hints from loopback only");
  static final Setting<Duration> ALLOCATION_HINT_MIN_GAP =
      Setting.millis(
          "KSE_ALLOCATION_HINT_MIN_GAP_MS",
          "least time between two extra polls of Slurm that allocation hints ask for (a flood of"
              + " hints costs at most one poll per gap)",
          20,
          0,
          10_000);
  static final Setting<Duration> PDB_OVERRIDE =
      Setting.millis(
          "KSE_PDB_OVERRIDE_MS",
          "how long a PodDisruptionBudget may hold off evicting a pod whose Slurm job ended before"
              + " the pod is deleted anyway: its GPUs already belong to another job",
          60_000,
          0,
          86_400_000);
  static final Setting<Duration> EVENT_QUIET =
      Setting.millis(
          "KSE_EVENT_QUIET_MS",
          "how long a placeholder pends, as Slurm is read after it, before its pods are told why"
              + " they wait (the kse.io/SlurmAllocated condition and a WaitingForSlurm Event); a"
              + " pod's SlurmJobSubmitted and AllocatedBySlurm Events are held six times as long:"
              + " a pod bound or told it waits meanwhile gets one Event saying them too (each Event"
              + " is an API write); 0: each at once",
          5_000,
          0,
          600_000);
  static final Setting<Integer> NOMINATE_FROM_NODES =
      Setting.integer(
          "KSE_NOMINATE_FROM_NODES",
          "from this many Kubernetes nodes a woken pod is also nominated to Slurm's node"
              + " (status.nominatedNodeName: kube-scheduler filters that node alone first), a"
              + " second API write per pod; below it the wake-up is one write. 0: always",
          1_000,
          0,
          10_000_000);
  static final Setting<Integer> WARM_UP_ROUNDS =
      Setting.integer(
          "KSE_WARM_UP_ROUNDS",
          "how many times a new extender runs its hottest paths in memory on a made-up pod before"
              + " it says ready (decoding a pod watch event, a filter call and its answer, a bind"
              + " call, the policy's decision), then a tenth as many times its own filter (answered"
              + " 'not synced', counted as outcome not_synced) and /healthz over loopback, so its"
              + " first burst finds them and its HTTP server and client compiled; no API or Slurm"
              + " call. 0: none",
          5_000,
          0,
          100_000);
  static final Setting<Duration> GROUP_INCOMPLETE_WAIT =
      Setting.millis(
          "KSE_GROUP_INCOMPLETE_WAIT_MS",
          "how long a multi-node group may lack members (its controller still creating them)"
              + " before its pods get an Event and condition saying so; it holds no Slurm job"
              + " until complete",
          30_000,
          0,
          86_400_000);
  static final Setting<String> DRA_GPU_CLASSES =
      Setting.string(
          "KSE_DRA_GPU_DEVICE_CLASSES",
          "comma-separated DeviceClasses whose ResourceClaim requests are GPUs: the extender"
              + " allocates such claims from the GPU indices Slurm gives the pod's placeholder; a"
              + " request whose selector names a MIG profile asks MIG devices (add NVIDIA's"
              + " mig.nvidia.com for those)",
          "gpu.nvidia.com");
  static final Setting<String> DRA_DRIVER =
      Setting.string(
          "KSE_DRA_GPU_DRIVER",
          "the DRA driver whose ResourceSlices publish the nodes' GPUs",
          "gpu.nvidia.com");
  static final Setting<String> DRA_INDEX_ATTRIBUTE =
      Setting.string(
          "KSE_DRA_GPU_INDEX_ATTRIBUTE",
          "the device attribute holding a GPU's index, the number Slurm's gres_detail IDX uses"
              + " for the same GPU (the NVIDIA DRA driver's index)",
          "index");
  static final Setting<Boolean> NODE_LABEL_SYNC =
      Setting.bool(
          "KSE_NODE_LABEL_SYNC",
          "write the topology labels Slurm implies on each node of both (kse.io/nvlink-domain from"
              + " its NVLink-domain feature, the TPU accelerator/topology labels from its slice"
              + " feature; docs/tpu.md), so they cannot drift from Slurm; needs patch on nodes",
          false);
  static final Setting<Boolean> POD_GROUPS =
      Setting.bool(
          "KSE_POD_GROUPS",
          "watch PodGroups (scheduling.k8s.io/v1beta1, the Workload API; Kubernetes 1.37 with"
              + " the GenericWorkload feature gate) so pods naming one are placed as a gang",
          true);
  static final Setting<Optional<String>> CLUSTER_ID =
      Setting.optional(
          "KSE_CLUSTER_ID",
          "this Kubernetes cluster's identity in every placeholder's comment (a DNS label), so that"
              + " clusters sharing one Slurm never touch each other's placeholders; default derived"
              + " from the kube-system namespace's UID",
          "");
  static final Setting<Optional<String>> SCONTROL_CONF =
      Setting.optional(
          "KSE_SCONTROL_CONF", "slurm.conf for scontrol, when KSE_DRAIN_VIA=scontrol", "");
  static final Setting<Void> LOG_LEVEL =
      Setting.documented(
          "KSE_LOG_LEVEL", "log level of the extender's own loggers (read by logback)", "INFO");

  /** How logback writes (logback.xml picks the appender by this name). */
  public enum LogFormat {
    TEXT,
    JSON
  }

  static final Setting<LogFormat> LOG_FORMAT =
      Setting.choice(
          "KSE_LOG_FORMAT",
          "text: one line per decision (event key=value ...); json: one JSON object per line"
              + " (logback's JsonEncoder), for log pipelines (read by logback; checked here)",
          LogFormat.TEXT,
          LogFormat.class);
  static final Setting<Boolean> FIELD_SELECTOR =
      Setting.bool(
          "KSE_POD_FIELD_SELECTOR",
          "true: the API server selects pods by spec.schedulerName; false: select"
              + " in the extender, for servers without that field selector",
          true);

  /** Every setting of the extender, in the order the docs list them. */
  static final List<Setting<?>> SETTINGS =
      List.of(
          HttpSettings.HTTP_HOST,
          HttpSettings.HTTP_PORT,
          HttpSettings.TLS_CERT,
          HttpSettings.TLS_KEY,
          HttpSettings.TLS_CLIENT_CA,
          HttpSettings.PLAINTEXT,
          HttpSettings.OPS_HOST,
          HttpSettings.OPS_PORT,
          SCHEDULER_NAME,
          POLICY_FILE,
          POLICY_RELOAD,
          HttpSettings.BODY_LIMIT,
          HttpSettings.INFLIGHT,
          HttpSettings.MAX_CONNECTIONS,
          HttpSettings.BODY_TIMEOUT,
          HttpSettings.IDLE_TIMEOUT,
          HttpSettings.HEAD_TIMEOUT,
          HttpSettings.VERB_THREADS,
          HttpSettings.QUEUED_VERBS,
          HttpSettings.MIN_NODE_NAMES,
          WORKDIR,
          SHAPE,
          WORKERS,
          NAMESPACE,
          CONFIG_FILE,
          LEADER_ELECTION,
          LEASE_NAMESPACE,
          LEASE_NAME,
          DRAIN_VIA,
          NODE_LABEL_SYNC,
          PDB_OVERRIDE,
          EVENT_QUIET,
          NOMINATE_FROM_NODES,
          WARM_UP_ROUNDS,
          ALLOCATION_HINT_TOKEN,
          ALLOCATION_HINT_MIN_GAP,
          HttpSettings.OPS_ADVERTISE,
          GROUP_INCOMPLETE_WAIT,
          POD_GROUPS,
          CLUSTER_ID,
          DRA_GPU_CLASSES,
          DRA_DRIVER,
          DRA_INDEX_ATTRIBUTE,
          SCONTROL_CONF,
          LOG_LEVEL,
          LOG_FORMAT,
          FIELD_SELECTOR);

  /** Each variable with its one line of documentation (generated docs, unknown-name errors). */
  public static final Map<String, String> VARIABLES = docs(SETTINGS);

  static Map<String, String> docs(List<Setting<?>> settings) {
    Map<String, String> v = new LinkedHashMap<>();
    settings.forEach(s -> v.put(s.name(), s.doc()));
    return java.util.Collections.unmodifiableMap(v);
  }

  /** Where the two listeners are, TLS for the verbs, and what any mix of callers may cost. */
  public record Http(
      String opsHost,
      int opsPort,
      Optional<io.kse.extender.http.TlsFiles> tls,
      io.kse.extender.http.HttpLimits limits) {}

  public static ExtenderConfig fromEnv(Map<String, String> env) {
    // every KSE_* name is ours: the extender's, the bridge's (KSE_SLURM_*), or an error; test
    // harness variables (KSE_LAB_*) are not accepted in production either
    Set<String> known = new HashSet<>(VARIABLES.keySet());
    known.addAll(SlurmConfig.VARIABLES.keySet());
    Settings r = new Settings(env).refuseUnknown("KSE_", known);
    SlurmConfig slurm = SlurmConfig.read(r);
    LOG_FORMAT.read(r); // logback has chosen already; a value it has no appender for is an error
    HttpSettings.Listeners listeners = HttpSettings.read(r, env);
    String host = listeners.host();
    int port = listeners.port();
    Optional<String> advertise = listeners.advertise();
    Http http = listeners.http();
    DrainVia drainVia = DRAIN_VIA.read(r);
    Optional<String> scontrolConf = SCONTROL_CONF.read(r);
    if (drainVia == DrainVia.SCONTROL && scontrolConf.isEmpty()) {
      r.problem("KSE_SCONTROL_CONF: required when KSE_DRAIN_VIA=scontrol");
    }
    Optional<String> hintToken = Optional.empty();
    Optional<Path> hintTokenFile = ALLOCATION_HINT_TOKEN.read(r);
    if (hintTokenFile.isPresent()) {
      try {
        hintToken =
            Optional.of(Files.readString(hintTokenFile.get()).trim()).filter(t -> !t.isEmpty());
        if (hintToken.isEmpty()) {
          r.problem("KSE_ALLOCATION_HINT_TOKEN_FILE: " + hintTokenFile.get() + " is empty");
        }
      } catch (java.io.IOException e) {
        r.problem("KSE_ALLOCATION_HINT_TOKEN_FILE: cannot read " + hintTokenFile.get() + ": " + e);
      }
    }
    Optional<String> clusterId = CLUSTER_ID.read(r);
    if (clusterId.isPresent() && !io.kse.slurm.PlaceholderTag.validClusterId(clusterId.get())) {
      r.problem(
          "KSE_CLUSTER_ID: must be a DNS label (a-z 0-9 -, up to 63 characters), got '"
              + clusterId.get()
              + "'");
    }
    ExtenderConfig c =
        new ExtenderConfig(
            host,
            port,
            SCHEDULER_NAME.read(r),
            POLICY_FILE.read(r),
            POLICY_RELOAD.read(r),
            http,
            WORKDIR.read(r),
            SHAPE.read(r),
            WORKERS.read(r),
            NAMESPACE.read(r),
            FIELD_SELECTOR.read(r),
            LEADER_ELECTION.read(r),
            LEASE_NAMESPACE.read(r).orElse(env.getOrDefault("POD_NAMESPACE", "default")),
            LEASE_NAME.read(r),
            // the pod's name (downward API) survives a container restart, so a restarted writer
            // takes its own Lease back at once instead of waiting for it to expire; with where
            // the replicas reach it (the pod's IP, which a restart keeps too)
            Optional.ofNullable(env.get("POD_NAME"))
                    .filter(n -> !n.isBlank())
                    .orElseGet(
                        () ->
                            env.getOrDefault("HOSTNAME", "kse") + "_" + java.util.UUID.randomUUID())
                + advertise.map(a -> "@" + a).orElse(""),
            drainVia,
            NODE_LABEL_SYNC.read(r),
            scontrolConf,
            PDB_OVERRIDE.read(r),
            GROUP_INCOMPLETE_WAIT.read(r),
            EVENT_QUIET.read(r),
            NOMINATE_FROM_NODES.read(r),
            WARM_UP_ROUNDS.read(r),
            POD_GROUPS.read(r),
            clusterId,
            new Dra(
                java.util.Arrays.stream(DRA_GPU_CLASSES.read(r).split(","))
                    .map(String::trim)
                    .filter(s -> !s.isEmpty())
                    .collect(java.util.stream.Collectors.toUnmodifiableSet()),
                DRA_DRIVER.read(r),
                DRA_INDEX_ATTRIBUTE.read(r)),
            new AllocationHint(hintToken, ALLOCATION_HINT_MIN_GAP.read(r)),
            slurm);
    r.throwIfAny("invalid settings");
    return c;
  }
}
