package io.kse.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kse.slurm.JobState;
import io.kse.slurm.PlaceholderTag;
import io.kse.slurm.SlurmClient;
import io.kse.slurm.SlurmJob;
import io.kse.slurm.testing.LocalSlurmCluster;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * What every scenario shares: the stack, a namespace of its own (deleted afterwards, with its
 * placeholders checked gone), pod builders and the two views of one pod — Kubernetes' and Slurm's.
 */
@ExtendWith(DiagnosticsOnFailure.class)
abstract class Scenario {
  static final String SCHEDULER = "slurm-inference";
  static final Duration BIND_TIMEOUT = Duration.ofSeconds(60);

  final E2eStack stack = E2eStack.shared();
  final KubernetesClient kube = stack.kube();
  final SlurmClient slurm = stack.slurm();
  String ns;

  /** The extender's taint on a Kubernetes node, its value (e.g. {@code down}), if it has one. */
  java.util.Optional<String> ourTaint(String node) {
    var taints = kube.nodes().withName(node).get().getSpec().getTaints();
    return taints == null
        ? java.util.Optional.empty()
        : taints.stream()
            .filter(t -> t.getKey().equals("kse.io/slurm-unavailable"))
            .map(io.fabric8.kubernetes.api.model.Taint::getValue)
            .findFirst();
  }

  /** Jobs this scenario submitted with sbatch: cancelled after it. */
  final List<Long> sbatchJobs = new ArrayList<>();

  @BeforeEach
  void namespace(TestInfo test) {
    String method = test.getTestMethod().map(m -> m.getName()).orElse("scenario");
    String kebab = method.replaceAll("([a-z0-9])([A-Z])", "$1-$2").toLowerCase();
    ns =
        "e2e-"
            + kebab.substring(0, Math.min(40, kebab.length()))
            + "-"
            + UUID.randomUUID().toString().substring(0, 6);
    kube.namespaces()
        .resource(new NamespaceBuilder().withNewMetadata().withName(ns).endMetadata().build())
        .create();
    // pods need the namespace's default ServiceAccount, made by the controller-manager
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> kube.serviceAccounts().inNamespace(ns).withName("default").get() != null);
  }

  @AfterEach
  void cleanUp() {
    cancelSbatchJobs();
    kube.namespaces().withName(ns).delete();
    // every placeholder of this namespace's pods must end with them; a failure says which did not
    // and what Slurm's nodes were doing (all CI shows of a run is its output)
    await()
        .atMost(Duration.ofSeconds(90))
        .untilAsserted(
            () -> {
              assertThat(activePlaceholders(ns).stream().map(Scenario::describe).toList())
                  .as(
                      () ->
                          "placeholders of "
                              + ns
                              + " not ended; Slurm's GPU nodes: "
                              + gpuNodeStates())
                  .isEmpty();
              assertThat(kube.namespaces().withName(ns).get()).as("namespace " + ns).isNull();
            });
  }

  /** A PodDisruptionBudget "keep-one": at least one pod labelled app=model-server available. */
  void keepOneModelServer() {
    kube.policy()
        .v1()
        .podDisruptionBudget()
        .inNamespace(ns)
        .resource(
            new io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudgetBuilder()
                .withNewMetadata()
                .withName("keep-one")
                .endMetadata()
                .withNewSpec()
                .withMinAvailable(new io.fabric8.kubernetes.api.model.IntOrString(1))
                .withNewSelector()
                .withMatchLabels(Map.of("app", "model-server"))
                .endSelector()
                .endSpec()
                .build())
        .create();
  }

  /** The disruption controller counts a healthy pod: only then does the budget block anything. */
  boolean pdbReady(String name) {
    var pdb = kube.policy().v1().podDisruptionBudget().inNamespace(ns).withName(name).get();
    return pdb != null
        && pdb.getStatus() != null
        && pdb.getStatus().getCurrentHealthy() != null
        && pdb.getStatus().getCurrentHealthy() >= 1;
  }

  /** The extender's verbs port (loopback, plain HTTP on the stack): {@code path} on it. */
  java.net.URI verbs(String path) {
    return java.net.URI.create(stack.env("KSE_E2E_EXTENDER_VERBS_URL") + path);
  }

  /** A job as a failure message shows it: id, state, Slurm's reason, nodes. */
  static String describe(SlurmJob j) {
    return j.id() + " " + j.state() + " (" + j.stateReason() + ") on " + j.nodes();
  }

  /** Each GPU node's state and flags as Slurm has them now, e.g. {@code gpu-node-3=IDLE[DRAIN]}. */
  String gpuNodeStates() {
    java.util.Set<String> gpu = new java.util.HashSet<>(stack.gpuNodes());
    return slurm.nodes().stream()
        .filter(n -> gpu.contains(n.name()))
        .map(
            n ->
                n.name()
                    + "="
                    + n.state()
                    + n.flags()
                    + (n.reason().isEmpty() ? "" : ":" + n.reason()))
        .sorted()
        .toList()
        .toString();
  }

  /** How long the extender may take to converge after a change. */
  static final Duration CONVERGE = Duration.ofSeconds(20);

  void scancel(long job) {
    stack.slurmCluster().cli("scancel", Long.toString(job));
  }

  /** Gone, or on its way out (the eviction was accepted). */
  boolean leaving(String name, String uid) {
    Pod p = pod(name);
    return p == null
        || !p.getMetadata().getUid().equals(uid)
        || p.getMetadata().getDeletionTimestamp() != null;
  }

  long awaitLeaving(String name, String uid, long sinceNanos) {
    await(name + " evicted")
        .atMost(CONVERGE)
        .pollInterval(Duration.ofMillis(50))
        .until(() -> leaving(name, uid));
    return (System.nanoTime() - sinceNanos) / 1_000_000;
  }

  /** An inference pod of our scheduler asking for {@code gpus} GPUs. */
  PodBuilder inferencePod(String name, int gpus) {
    return inferencePodOf(gpus)
        .editMetadata()
        .withName(name)
        .withNamespace(ns)
        .withLabels(Map.of("app", "model-server"))
        .endMetadata();
  }

  /** The pod every scenario (and the soak) uses, unnamed: our scheduler, {@code gpus} GPUs. */
  static PodBuilder inferencePodOf(int gpus) {
    return new PodBuilder()
        .withNewMetadata()
        .endMetadata()
        .withNewSpec()
        .withSchedulerName(SCHEDULER)
        .withTerminationGracePeriodSeconds(0L)
        .addNewContainer()
        .withName("server")
        .withImage("registry.example/model-server:1")
        .withNewResources()
        .withLimits(Map.of("nvidia.com/gpu", new Quantity(Integer.toString(gpus))))
        .endResources()
        .endContainer()
        .endSpec();
  }

  Pod create(PodBuilder pod) {
    return kube.pods().inNamespace(ns).resource(pod.build()).create();
  }

  Pod pod(String name) {
    return kube.pods().inNamespace(ns).withName(name).get();
  }

  /** Waits until the pod has a node; returns it as the API server has it then. */
  Pod awaitBound(String name) {
    Pod[] seen = new Pod[1];
    await("pod " + name + " bound")
        .atMost(BIND_TIMEOUT)
        .pollInterval(Duration.ofMillis(100))
        .until(
            () -> {
              seen[0] = pod(name);
              return seen[0] != null && seen[0].getSpec().getNodeName() != null;
            });
    return seen[0];
  }

  /** Every job Slurm still knows (running, pending, and recently ended). */
  List<SlurmJob> jobs() {
    return slurm.jobsChangedSince(Instant.EPOCH).jobs();
  }

  /**
   * The extender's Slurm user's jobs (our placeholders), as slurmrestd shows them now: their ids
   * from {@code squeue -u}, which slurmctld answers from that user's jobs alone however many others
   * are queued (the scale rig queues 5,000), each then read alone. A helper must cost what the
   * extender costs: the whole listing timed out there. Without the local Slurm CLI, the listing.
   */
  List<SlurmJob> placeholders() {
    if (!stack.managed()) {
      return jobs();
    }
    LocalSlurmCluster c = stack.slurmCluster();
    String ids = c.cli("squeue", "-h", "-t", "all", "-u", c.env("KSE_LAB_JWT_USER"), "-o", "%i");
    return ids.lines()
        .map(String::trim)
        .filter(l -> l.matches("[0-9]+"))
        .map(l -> slurm.job(Long.parseLong(l)))
        .flatMap(Optional::stream)
        .toList();
  }

  /** The placeholder of the pod with this UID, as slurmrestd shows it now. */
  Optional<SlurmJob> placeholderOf(String podUid) {
    return placeholders().stream()
        .filter(j -> j.placeholder().map(PlaceholderTag::uid).filter(podUid::equals).isPresent())
        .reduce((a, b) -> a.id() > b.id() ? a : b);
  }

  SlurmJob placeholderOf(Pod pod) {
    return placeholderOf(pod.getMetadata().getUid())
        .orElseThrow(
            () -> new AssertionError("no Slurm placeholder for " + pod.getMetadata().getName()));
  }

  /** Placeholders of pods in {@code namespace} that are not over yet. */
  List<SlurmJob> activePlaceholders(String namespace) {
    return placeholders().stream()
        .filter(
            j ->
                j.placeholder()
                    .map(PlaceholderTag::namespace)
                    .filter(namespace::equals)
                    .isPresent())
        .filter(j -> !j.state().isFinal())
        .toList();
  }

  List<Event> events(String podName) {
    return kube.v1()
        .events()
        .inNamespace(ns)
        .withField("involvedObject.name", podName)
        .list()
        .getItems();
  }

  /** The reasons of the pod's Events, oldest first. */
  List<String> eventReasons(String podName) {
    return events(podName).stream().map(Event::getReason).toList();
  }

  /**
   * An exclusive 8-GPU job submitted with sbatch (not one of our placeholders), on {@code node}
   * when given: training work, or filler that keeps a node busy.
   */
  long sbatch(String partition, String node) {
    return sbatch(partition, node, 8, true);
  }

  /** A one-node sbatch job asking {@code gpus} GPUs, the node to itself if {@code exclusive}. */
  long sbatch(String partition, String node, int gpus, boolean exclusive) {
    return sbatch(partition, node, "gpu:h100:" + gpus, exclusive);
  }

  /** A one-node sbatch job asking {@code gres} (e.g. {@code tpu:4}) on {@code node} if given. */
  long sbatch(String partition, String node, String gres, boolean exclusive) {
    LocalSlurmCluster c = stack.slurmCluster();
    List<String> cmd =
        new ArrayList<>(
            List.of(
                "sbatch",
                "--parsable",
                "-p",
                partition,
                "-N1",
                "--gres=" + gres,
                "-J",
                "e2e-" + partition,
                "-o",
                "/dev/null",
                "-D",
                c.env("KSE_LAB_JOB_DIR")));
    if (node != null) {
      cmd.addAll(List.of("-w", node));
    }
    if (exclusive) {
      cmd.add("--exclusive");
    }
    cmd.addAll(List.of("--wrap", "sleep 3600"));
    long id = Long.parseLong(c.cli(cmd.toArray(String[]::new)).trim().split(";")[0]);
    sbatchJobs.add(id);
    return id;
  }

  /**
   * Slurm node {@code node} fails (its slurmd and the job steps there stop answering, Slurm sets it
   * DOWN) while {@code body} runs; then it answers again and is resumed. On 26.05 any message from
   * the node may return it to service, a running step's too: both are stopped.
   */
  void whileSlurmNodeIsDown(String node, ThrowingRunnable body) throws Exception {
    LocalSlurmCluster slurmCluster = stack.slurmCluster();
    try {
      slurmCluster.freezeNode(node, true);
      slurmCluster.cli("scontrol", "update", "nodename=" + node, "state=down", "reason=e2e-failed");
      body.run();
    } finally {
      slurmCluster.freezeNode(node, false);
      slurmCluster.resumeNode(node);
    }
  }

  /** A step of a scenario that may throw. */
  interface ThrowingRunnable {
    void run() throws Exception;
  }

  /** The live placeholder jobs of this namespace's groups, by group id. */
  java.util.Map<String, io.kse.slurm.SlurmJob> groupJobs() {
    return activePlaceholders(ns).stream()
        .filter(j -> j.placeholder().flatMap(io.kse.slurm.PlaceholderTag::group).isPresent())
        .collect(
            java.util.stream.Collectors.toMap(
                j -> j.placeholder().orElseThrow().group().orElseThrow(), j -> j));
  }

  java.util.List<Pod> pods() {
    return kube.pods().inNamespace(ns).list().getItems();
  }

  /** Waits until {@code n} pods exist in the namespace and every one of them is bound. */
  java.util.List<Pod> awaitAllBound(int n) {
    await(n + " pods bound")
        .atMost(BIND_TIMEOUT)
        .pollInterval(Duration.ofMillis(200))
        .until(
            () ->
                pods().size() == n
                    && pods().stream().allMatch(p -> p.getSpec().getNodeName() != null));
    return pods();
  }

  /** The pod's ResourceClaim {@code gpus}, once it is allocated. */
  io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim claimOf(Pod pod) {
    return claimOf(pod, "gpus");
  }

  /** The pod's ResourceClaim {@code entry} (its name in the pod's spec), once it is allocated. */
  io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim claimOf(Pod pod, String entry) {
    java.util.concurrent.atomic.AtomicReference<
            io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim>
        claim = new java.util.concurrent.atomic.AtomicReference<>();
    await("the claim of " + pod.getMetadata().getName() + " allocated")
        .atMost(Duration.ofSeconds(10))
        .until(
            () -> {
              Pod now = pod(pod.getMetadata().getName());
              String name =
                  now.getStatus().getResourceClaimStatuses().stream()
                      .filter(s -> s.getName().equals(entry))
                      .findFirst()
                      .orElseThrow()
                      .getResourceClaimName();
              claim.set(
                  kube.resources(io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim.class)
                      .inNamespace(ns)
                      .withName(name)
                      .get());
              return claim.get().getStatus() != null
                  && claim.get().getStatus().getAllocation() != null;
            });
    return claim.get();
  }

  record CheckSlurmRun(int exit, String out) {}

  /**
   * check-slurm against the stack's Slurm (and Kubernetes, for --kubernetes) with {@code policy}.
   */
  CheckSlurmRun checkSlurm(java.nio.file.Path policy, String... more) {
    var c = stack.slurmCluster();
    java.io.StringWriter out = new java.io.StringWriter();
    String previous = System.getProperty("kubeconfig");
    System.setProperty("kubeconfig", stack.dir().resolve("admin.kubeconfig").toString());
    try {
      int exit =
          io.kse.extender.tools.CheckSlurm.run(
              java.util.Map.of(
                  "KSE_SLURM_URL", c.restUrl().toString(),
                  "KSE_SLURM_USER", c.env("KSE_LAB_JWT_USER"),
                  "KSE_SLURM_JWT_FILE", c.env("KSE_LAB_JWT_FILE")),
              new java.io.PrintWriter(out, true),
              new java.io.PrintWriter(out, true),
              java.util.stream.Stream.concat(
                      java.util.stream.Stream.of("--policy", policy.toString()),
                      java.util.Arrays.stream(more))
                  .toArray(String[]::new));
      return new CheckSlurmRun(exit, out.toString());
    } finally {
      if (previous == null) {
        System.clearProperty("kubeconfig");
      } else {
        System.setProperty("kubeconfig", previous);
      }
    }
  }

  /** Cancels the jobs this scenario submitted with sbatch so far (with scancel, as root). */
  void cancelSbatchJobs() {
    if (!sbatchJobs.isEmpty()) { // root's jobs: the unprivileged REST user may not cancel them
      List<String> cmd = new ArrayList<>(List.of("scancel"));
      sbatchJobs.forEach(id -> cmd.add(Long.toString(id)));
      stack.slurmCluster().cli(cmd.toArray(String[]::new));
      sbatchJobs.clear();
    }
  }

  /** The jobs of {@code training} (job id → node) that no longer run: Slurm's victims. */
  List<SlurmJob> displaced(Map<Long, String> training) {
    return training.keySet().stream()
        .map(id -> slurm.job(id).orElseThrow())
        .filter(j -> !running(j))
        .toList();
  }

  /** What {@code kubectl cordon} (true) and {@code uncordon} (false) do. */
  void setUnschedulable(String node, boolean unschedulable) {
    kube.nodes()
        .withName(node)
        .edit(
            n -> {
              n.getSpec().setUnschedulable(unschedulable ? true : null);
              return n;
            });
  }

  /**
   * An exclusive sbatch job in {@code partition} on every GPU node, running; returns job id → node.
   */
  Map<Long, String> busyEveryGpuNode(String partition) {
    return busyGpuNodes(partition, stack.gpuNodes());
  }

  /** As {@link #busyEveryGpuNode}, on these nodes only. */
  Map<Long, String> busyGpuNodes(String partition, List<String> nodes) {
    Map<Long, String> jobs = new java.util.LinkedHashMap<>();
    for (String node : nodes) {
      jobs.put(sbatch(partition, node), node);
    }
    await(partition + " jobs running on every GPU node")
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () ->
                assertThat(
                        jobs.keySet().stream()
                            .map(id -> slurm.job(id))
                            .filter(j -> !j.map(Scenario::running).orElse(false))
                            .map(j -> j.map(Scenario::describe).orElse("(gone)"))
                            .toList())
                    .as(
                        () ->
                            partition + " jobs not running; Slurm's GPU nodes: " + gpuNodeStates())
                    .isEmpty());
    awaitExtenderSawSlurmAfter(Instant.now());
    return jobs;
  }

  /**
   * Waits until the extender's Slurm cache has polled since {@code t}. Work that has just started
   * (as these scenarios' training does, seconds before a pod preempts it; in production it has run
   * for minutes) is charged to a preemption only if the cache saw it running: Slurm does not say
   * which nodes a requeued job lost (docs/runbook.md).
   */
  void awaitExtenderSawSlurmAfter(Instant t) {
    await("the extender's Slurm cache polled")
        .atMost(Duration.ofSeconds(10))
        .pollInterval(Duration.ofMillis(100))
        .until(
            () ->
                stack
                    .extenderMetric("", "kse_slurm_cache_age_seconds")
                    .map(age -> Instant.now().minusMillis((long) (age * 1000)).isAfter(t))
                    .orElse(false));
  }

  static boolean running(SlurmJob j) {
    return j.state() == JobState.RUNNING;
  }
}
