package io.kse.e2e;

import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudgetBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kse.slurm.testing.LocalSlurmCluster;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Random;
import java.util.TreeMap;
import java.util.function.Consumer;

/**
 * The soak's seeded schedule of ordinary operations and faults: Deployments scaled, pods deleted
 * and force-deleted, groups made and removed, training and critical jobs submitted, cancelled,
 * requeued, held, released and cut short, nodes drained, cordoned and set DOWN (and back),
 * slurmctld restarted, slurmrestd stopped (and back), the writer extender killed with SIGKILL (and
 * back: with two replicas, the other takes over), the policy file changed (valid and invalid, and
 * back), PodDisruptionBudgets added and removed. Every action is logged with its time, so a failure
 * can be replayed from the seed. The same seed gives the same sequence of choices (what the cluster
 * answers may differ).
 */
final class SoakSchedule {
  /** One kind of action and how often it is chosen relative to the others. */
  private record Kind(String name, int weight, Consumer<Random> run) {}

  /** Something the schedule undoes later (a node resumed, slurmrestd started). */
  private record Later(Instant at, String what, Runnable run) implements Comparable<Later> {
    @Override
    public int compareTo(Later o) {
      return at.compareTo(o.at);
    }
  }

  /** The Deployments the schedule scales; with shards also {@value #SHARED} (issue 46). */
  private final List<String> deployments =
      new ArrayList<>(List.of("serving", "gpus-4", "gpus-2", "gpus-1", "dra-2"));

  /**
   * On a stack with Slurm shards: a Deployment of quarter-GPU pods (one share, one shard each) of
   * the tier that may share, stopping slowly as the DRA Deployment's do.
   */
  static final String SHARED = "share-1";

  /** The claim template of {@value #SHARED}: one share of a GPU. */
  private static final String ONE_SHARE = "soak-one-share";

  /**
   * The DRA Deployment's pods take this long to stop once deleted, as a model server freeing GPU
   * memory would: a finalizer the schedule lifts then ({@link #releaseStopped}). Whatever ended
   * their placeholder, no other job may get their GPUs meanwhile (GPU_HAS_ONE_OWNER).
   */
  static final Duration SLOW_STOP = Duration.ofSeconds(6);

  static final String SLOW_STOP_FINALIZER = "e2e.kse.io/slow-stop";

  /** The claim template of the DRA Deployment: its pods get exactly the GPUs Slurm chose. */
  private static final String TWO_GPUS = "soak-two-gpus";

  private final E2eStack stack;
  private final KubernetesClient kube;
  private final LocalSlurmCluster slurm;
  private final String ns;
  private final SoakChecker checker;
  private final Random random;
  private final Instant start = Instant.now();
  private final List<Kind> kinds = new ArrayList<>();
  private final PriorityQueue<Later> later = new PriorityQueue<>();
  private final List<String> log = Collections.synchronizedList(new ArrayList<>());
  private final Map<String, Integer> counts = new TreeMap<>();
  private final List<Long> slurmJobs = new ArrayList<>();
  private final List<String> groups = new ArrayList<>();

  /** GPU nodes a pending undo is about: no second fault on them meanwhile. */
  private final java.util.Set<String> busyNodes = new java.util.HashSet<>();

  private boolean pdb;

  /** Whether the Deployment's second pod runs (a standby kube-scheduler and extender b). */
  private final boolean twoReplicas;

  private boolean policyChanged;

  /** The policy file in place now is one no extender can start on. */
  private boolean policyInvalid;

  private int groupSeq;

  /** The outage under way (one at a time, so each is seen alone), or null. */
  private String outage;

  private Instant lastOutage = Instant.EPOCH;

  /** At most one outage this often: the checker needs quiet time to hold the system to account. */
  private static final Duration OUTAGE_GAP = Duration.ofSeconds(45);

  /** The shards each GPU has in Slurm (issue 46); 0 on a stack without. */
  private final int shardsPerGpu;

  SoakSchedule(
      E2eStack stack,
      String ns,
      SoakChecker checker,
      long seed,
      boolean twoReplicas,
      int shardsPerGpu) {
    this.twoReplicas = twoReplicas;
    this.shardsPerGpu = shardsPerGpu;
    this.stack = stack;
    this.kube = stack.kube();
    this.slurm = stack.slurmCluster();
    this.ns = ns;
    this.checker = checker;
    this.random = new Random(seed);
    kinds.add(new Kind("scale", 8, this::scale));
    kinds.add(new Kind("delete-pod", 3, this::deletePod));
    // issue 60: every pod of a Deployment deleted at once and recreated by its ReplicaSet, as a
    // rolling update with maxSurge 0 or a Knative revision flapping does
    kinds.add(new Kind("replace-pods", 2, this::replacePods));
    kinds.add(new Kind("group-create", 2, this::createGroup));
    kinds.add(new Kind("group-delete", 1, this::deleteGroup));
    kinds.add(new Kind("training-submit", 3, r -> submit(r, "training", 4 * (1 + r.nextInt(2)))));
    kinds.add(new Kind("critical-submit", 1, r -> submit(r, "critical", 8)));
    kinds.add(new Kind("job-cancel", 2, r -> onJob(r, "scancel")));
    kinds.add(new Kind("job-requeue", 1, r -> onJob(r, "requeue")));
    kinds.add(new Kind("job-hold-release", 1, r -> onJob(r, "hold")));
    kinds.add(new Kind("job-time-limit", 1, r -> onJob(r, "timelimit")));
    // a placeholder ended from outside, not by preemption: the hold keeps its node until its pod
    // is gone (GPU_HAS_ONE_OWNER)
    kinds.add(new Kind("placeholder-cancel", 1, r -> onPlaceholder(r, "scancel")));
    kinds.add(new Kind("placeholder-time-limit", 1, r -> onPlaceholder(r, "timelimit")));
    kinds.add(new Kind("node-drain", 1, r -> nodeState(r, "drain")));
    kinds.add(new Kind("node-down", 1, r -> nodeState(r, "down")));
    kinds.add(new Kind("node-cordon", 1, this::cordon));
    kinds.add(new Kind("pdb", 1, this::pdb));
    kinds.add(new Kind("slurmrestd-stop", 1, this::stopRest));
    kinds.add(new Kind("slurmctld-restart", 1, this::restartController));
    kinds.add(new Kind("extender-kill", 1, this::killExtender));
    kinds.add(new Kind("policy-change", 1, this::changePolicy));
  }

  /** The workloads the schedule scales: created with no replicas; the second replica started. */
  void setUp() {
    if (twoReplicas) {
      stack.startReplica();
      note("second replica started (kse-scheduler-b, extender b)");
    }
    DraGpus.publish(kube, stack.gpuNodes(), shardsPerGpu);
    DraGpus.template(kube, ns, TWO_GPUS, 2);
    if (shardsPerGpu > 0) {
      DraGpus.shareTemplate(kube, ns, ONE_SHARE, 1);
      deployments.add(SHARED);
    }
    for (String d : deployments) {
      kube.apps().deployments().inNamespace(ns).resource(deployment(d)).create();
    }
    // one DRA pod from the start (two sharing a GPU with shards): a short soak holds GPU claims
    // too, whatever its seed scales
    kube.apps().deployments().inNamespace(ns).withName("dra-2").scale(1);
    note("scale dra-2 to 1");
    if (shardsPerGpu > 0) {
      kube.apps().deployments().inNamespace(ns).withName(SHARED).scale(2);
      note("scale " + SHARED + " to 2");
    }
  }

  /** Runs actions every 1-4 s until {@code until}, then undoes every pending fault. */
  void run(Instant until) throws InterruptedException {
    int total = kinds.stream().mapToInt(Kind::weight).sum();
    while (Instant.now().isBefore(until)) {
      runDue(Instant.now());
      int pick = random.nextInt(total);
      for (Kind k : kinds) {
        pick -= k.weight();
        if (pick < 0) {
          act(k.name(), () -> k.run().accept(random));
          break;
        }
      }
      Thread.sleep(1000 + random.nextInt(3000));
    }
    runDue(Instant.MAX);
  }

  /** The actions so far, each with its time since the start. */
  List<String> log() {
    synchronized (log) {
      return List.copyOf(log);
    }
  }

  List<String> recent(int n) {
    synchronized (log) {
      return List.copyOf(log.subList(Math.max(0, log.size() - n), log.size()));
    }
  }

  Map<String, Integer> counts() {
    return Map.copyOf(counts);
  }

  /** Lets the pods deleted at least {@code after} ago finish stopping (lifts their finalizer). */
  void releaseStopped(Duration after) {
    Instant now = Instant.now();
    for (Pod p : kube.pods().inNamespace(ns).list().getItems()) {
      String deleted = p.getMetadata().getDeletionTimestamp();
      List<String> finalizers = p.getMetadata().getFinalizers();
      if (deleted == null
          || finalizers == null
          || !finalizers.contains(SLOW_STOP_FINALIZER)
          || Instant.parse(deleted).plus(after).isAfter(now)) {
        continue;
      }
      try {
        kube.pods()
            .inNamespace(ns)
            .withName(p.getMetadata().getName())
            .edit(
                q -> {
                  q.getMetadata().getFinalizers().remove(SLOW_STOP_FINALIZER);
                  return q;
                });
      } catch (io.fabric8.kubernetes.client.KubernetesClientException e) {
        // gone or changed meanwhile: the next look
      }
    }
  }

  /** No pod of the slow-stopping Deployments left: the namespace can go. */
  private void stopSlowPods() {
    List<String> slow = deployments.stream().filter(SoakSchedule::stopsSlowly).toList();
    slow.forEach(d -> kube.apps().deployments().inNamespace(ns).withName(d).scale(0));
    Instant until = Instant.now().plusSeconds(60);
    while (Instant.now().isBefore(until)
        && kube.pods()
                .inNamespace(ns)
                .withLabelIn("app", slow.toArray(String[]::new))
                .list()
                .getItems()
                .size()
            > 0) {
      releaseStopped(Duration.ZERO);
      try {
        Thread.sleep(500);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
  }

  /** Leaves the stack as the next scenario expects it: one replica, the first writing. */
  void tearDown() {
    stopSlowPods();
    if (twoReplicas) {
      stack.stopReplica();
    }
    stack.startExtender(""); // if the schedule ended with it killed
  }

  /** Cancels the Slurm jobs the schedule submitted (root's: scancel as root). */
  void cancelJobs() {
    if (!slurmJobs.isEmpty()) {
      List<String> cmd = new ArrayList<>(List.of("scancel"));
      slurmJobs.forEach(id -> cmd.add(Long.toString(id)));
      tryCli(cmd.toArray(String[]::new));
    }
  }

  // ---- the actions ---------------------------------------------------------------------------

  private void scale(Random r) {
    String d = deployments.get(r.nextInt(deployments.size()));
    int replicas = r.nextInt(d.equals("serving") ? 3 : 4);
    kube.apps().deployments().inNamespace(ns).withName(d).scale(replicas);
    note("scale " + d + " to " + replicas);
  }

  private void deletePod(Random r) {
    List<Pod> pods = kube.pods().inNamespace(ns).list().getItems();
    boolean force = r.nextInt(10) < 3;
    if (pods.isEmpty()) {
      return;
    }
    Pod p = pods.get(r.nextInt(pods.size()));
    var op = kube.pods().inNamespace(ns).withName(p.getMetadata().getName());
    if (force) {
      op.withGracePeriod(0).delete();
    } else {
      op.delete();
    }
    note((force ? "force-delete " : "delete ") + p.getMetadata().getName());
  }

  private void replacePods(Random r) {
    String d = deployments.get(r.nextInt(deployments.size()));
    List<Pod> pods = kube.pods().inNamespace(ns).withLabel("app", d).list().getItems();
    if (pods.isEmpty()) {
      return;
    }
    kube.pods().inNamespace(ns).withLabel("app", d).delete();
    note("replace " + pods.size() + " pod(s) of " + d);
  }

  private void createGroup(Random r) {
    if (groups.size() >= 2) {
      return;
    }
    String g = "g" + groupSeq++;
    int size = 2 + r.nextInt(2);
    for (int i = 0; i < size; i++) {
      kube.pods().inNamespace(ns).resource(groupMember(g, size, i)).create();
    }
    groups.add(g);
    note("group " + g + " of " + size + " x 4 GPUs");
  }

  private void deleteGroup(Random r) {
    if (groups.isEmpty()) {
      return;
    }
    String g = groups.remove(r.nextInt(groups.size()));
    kube.pods().inNamespace(ns).withLabel("soak-group", g).delete();
    note("delete group " + g);
  }

  private void submit(Random r, String partition, int gpus) {
    int minutes = 2 + r.nextInt(8);
    String out =
        tryCli(
            "sbatch",
            "--parsable",
            "-p",
            partition,
            "-N1",
            "--gres=gpu:h100:" + gpus,
            "-t",
            Integer.toString(minutes),
            "-J",
            "soak-" + partition,
            "-o",
            "/dev/null",
            "-D",
            slurm.env("KSE_LAB_JOB_DIR"),
            "--wrap",
            "sleep 3600");
    if (out != null && !out.isBlank()) {
      slurmJobs.add(Long.parseLong(out.trim().split(";")[0]));
      note(partition + " job " + out.trim() + ": " + gpus + " GPUs, " + minutes + " min");
    }
  }

  private void onJob(Random r, String what) {
    if (slurmJobs.isEmpty()) {
      return;
    }
    String id = Long.toString(slurmJobs.get(r.nextInt(slurmJobs.size())));
    switch (what) {
      case "scancel" -> tryCli("scancel", id);
      case "requeue" -> {
        checker.requeuedByHand(Long.parseLong(id));
        tryCli("scontrol", "requeue", id);
      }
      case "hold" -> {
        tryCli("scontrol", "hold", id);
        later(
            Duration.ofSeconds(5 + r.nextInt(30)),
            "release " + id,
            () -> tryCli("scontrol", "release", id));
      }
      default -> tryCli("scontrol", "update", "jobid=" + id, "timelimit=1");
    }
    note(what + " job " + id);
  }

  /** An admin's cancel, or a time limit cut short, of a running placeholder of ours. */
  private void onPlaceholder(Random r, String what) {
    List<SlurmTruth.Job> running =
        SlurmTruth.read(slurm).orElse(List.of()).stream()
            .filter(j -> j.tag().isPresent() && j.running())
            .toList();
    if (running.isEmpty()) {
      return;
    }
    String id = Long.toString(running.get(r.nextInt(running.size())).id());
    if (what.equals("scancel")) {
      tryCli("scancel", id);
    } else {
      tryCli("scontrol", "update", "jobid=" + id, "timelimit=1");
    }
    note("placeholder " + what + " " + id);
  }

  private void nodeState(Random r, String state) {
    String node = idleNode(r);
    if (node == null) {
      return;
    }
    if (state.equals("down")) {
      checker.nodeSetDown(node, java.time.Instant.now());
    }
    tryCli("scontrol", "update", "nodename=" + node, "state=" + state, "reason=soak");
    note(state + " " + node);
    later(
        Duration.ofSeconds(10 + r.nextInt(30)),
        "resume " + node,
        () -> {
          slurm.resumeNode(node);
          busyNodes.remove(node);
        });
  }

  private void cordon(Random r) {
    String node = idleNode(r);
    if (node == null) {
      return;
    }
    setUnschedulable(node, true);
    note("cordon " + node);
    later(
        Duration.ofSeconds(10 + r.nextInt(30)),
        "uncordon " + node,
        () -> {
          setUnschedulable(node, false);
          busyNodes.remove(node);
        });
  }

  private void pdb(Random r) {
    if (pdb) {
      return;
    }
    String d = deployments.get(r.nextInt(deployments.size()));
    kube.policy()
        .v1()
        .podDisruptionBudget()
        .inNamespace(ns)
        .resource(
            new PodDisruptionBudgetBuilder()
                .withNewMetadata()
                .withName("soak-pdb")
                .endMetadata()
                .withNewSpec()
                .withMinAvailable(new IntOrString(1))
                .withNewSelector()
                .withMatchLabels(Map.of("app", d))
                .endSelector()
                .endSpec()
                .build())
        .create();
    pdb = true;
    note("PodDisruptionBudget minAvailable 1 on " + d);
    later(
        Duration.ofSeconds(20 + r.nextInt(40)),
        "remove the PodDisruptionBudget",
        () -> {
          kube.policy().v1().podDisruptionBudget().inNamespace(ns).withName("soak-pdb").delete();
          pdb = false;
        });
  }

  private void stopRest(Random r) {
    outage(
        "slurmrestd stopped",
        slurm::stopRest,
        Duration.ofSeconds(5 + r.nextInt(15)),
        "slurmrestd started",
        slurm::startRest);
  }

  private void restartController(Random r) {
    outage(
        "slurmctld stopped",
        slurm::stopController,
        Duration.ofMillis(1000L + r.nextInt(4000)),
        "slurmctld started",
        slurm::startController);
  }

  /**
   * SIGKILL to the writer (no shutdown hook, its Lease not released): with two replicas the other
   * takes the Lease within its 15 s and converges from what is true; the killed one comes back as a
   * standby.
   */
  private void killExtender(Random r) {
    if (policyInvalid) {
      // an extender started on an invalid policy refuses to start, by design (a rolling upgrade
      // with a bad policy stops at its first new pod while the old ones go on placing): the soak
      // keeps the two faults apart (its 60-minute run on 26.05 restarted one into such a window)
      return;
    }
    List<String> replicas = twoReplicas ? E2eStack.REPLICAS : List.of("");
    String victim = replicas.get(r.nextInt(replicas.size()));
    for (String rep : replicas) {
      if (stack.extenderMetric(rep, "kse_writer").orElse(0.0) >= 1) {
        victim = rep;
      }
    }
    String name = victim.isEmpty() ? "extender" : "extender " + victim;
    String killed = victim;
    // a restarted extender keeps its identity and takes its own Lease back at once (a container
    // restart); down longer than the Lease's 15 s, the other replica takes over (a lost pod)
    Duration down = Duration.ofSeconds(twoReplicas ? 2 + r.nextInt(33) : 2 + r.nextInt(8));
    outage(
        name + " (the writer) killed (SIGKILL) for " + down.toSeconds() + " s",
        () -> stack.killExtender(killed),
        down,
        name + " started",
        () -> {
          for (String other : replicas) {
            if (!other.equals(killed)
                && stack.extenderMetric(other, "kse_writer").orElse(0.0) >= 1) {
              note("writer meanwhile: extender " + (other.isEmpty() ? "(first)" : other));
            }
          }
          stack.startExtender(killed);
        });
  }

  /**
   * The policy file every replica reads, changed for 5-20 s and restored: a valid change (a tier's
   * maxNodes, which the soak's groups never reach) is applied; an invalid one (a default tier that
   * does not exist) is refused and the last good policy stays.
   */
  private void changePolicy(Random r) {
    if (policyChanged) {
      return;
    }
    Path file = stack.dir().resolve("policy.yaml");
    String good;
    try {
      good = Files.readString(file);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    boolean valid = r.nextBoolean();
    if (!valid && outage != null && outage.contains("killed")) {
      return; // an extender down now would be started on it (see killExtender)
    }
    String changed =
        valid
            ? good.replace("maxNodes: 8 ", "maxNodes: 6 ")
            : good.replace("defaultTier: inference", "defaultTier: no-such-tier");
    if (changed.equals(good)) {
      return;
    }
    write(file, changed);
    policyChanged = true;
    policyInvalid = !valid;
    note(
        valid
            ? "policy changed (valid: maxNodes 8 -> 6)"
            : "policy changed (invalid: defaultTier)");
    later(
        Duration.ofSeconds(5 + r.nextInt(15)),
        "policy restored",
        () -> {
          write(file, good);
          policyChanged = false;
          policyInvalid = false;
        });
  }

  /** As a ConfigMap volume changes: the new file appears whole (no replica reads half of it). */
  private static void write(Path file, String text) {
    try {
      Path tmp = file.resolveSibling(file.getFileName() + ".soak");
      Files.writeString(tmp, text);
      Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * Begins an outage the extender cannot see through, and ends it {@code after} (the checker's
   * bounds count from its end). One at a time and at most one per {@link #OUTAGE_GAP}: a restart
   * waiting on another outage would say nothing about either.
   */
  private void outage(String begin, Runnable stop, Duration after, String end, Runnable start) {
    if (outage != null || Instant.now().isBefore(lastOutage.plus(OUTAGE_GAP))) {
      return;
    }
    outage = begin;
    lastOutage = Instant.now();
    checker.disruptionBegins();
    try {
      stop.run();
    } finally {
      note(begin);
      later(after, end, () -> endOutage(start));
    }
  }

  private void endOutage(Runnable start) {
    try {
      start.run();
    } catch (RuntimeException e) {
      note("restart failed, once more: " + e.getMessage().lines().findFirst().orElse(""));
      start.run();
    } finally {
      outage = null;
      checker.disruptionEnds(Instant.now());
    }
  }

  // ---- helpers -------------------------------------------------------------------------------

  /** Runs one action; counted when it did something (each action notes what it did, or skips). */
  private void act(String kind, Runnable action) {
    int before = log.size();
    try {
      action.run();
    } catch (RuntimeException e) {
      note(kind + " failed: " + e.getMessage().lines().findFirst().orElse(""));
    }
    if (log.size() > before) {
      counts.merge(kind, 1, Integer::sum);
    }
  }

  private void runDue(Instant now) {
    while (!later.isEmpty() && !later.peek().at().isAfter(now)) {
      Later l = later.poll();
      act(
          "undo",
          () -> {
            l.run().run();
            note(l.what());
          });
    }
  }

  private void later(Duration in, String what, Runnable run) {
    later.add(new Later(Instant.now().plus(in), what, run));
  }

  /** A GPU node no pending undo is about, or null. */
  private String idleNode(Random r) {
    List<String> nodes = stack.gpuNodes();
    String node = nodes.get(r.nextInt(nodes.size()));
    return busyNodes.add(node) ? node : null;
  }

  private void setUnschedulable(String node, boolean on) {
    kube.nodes()
        .withName(node)
        .edit(
            n -> {
              n.getSpec().setUnschedulable(on ? true : null);
              return n;
            });
  }

  /** A Slurm command whose failure is part of the chaos (the controller may be restarting). */
  private String tryCli(String... cmd) {
    try {
      return slurm.cli(cmd);
    } catch (RuntimeException e) {
      note(String.join(" ", cmd) + " failed: " + e.getMessage().lines().findFirst().orElse(""));
      return null;
    }
  }

  private void note(String what) {
    String line =
        String.format(
            "+%6.1fs %s", Duration.between(start, Instant.now()).toMillis() / 1000.0, what);
    log.add(line);
    System.out.println("[soak] " + line);
  }

  private Deployment deployment(String name) {
    int gpus =
        switch (name) {
          case "serving" -> 8;
          case "gpus-4" -> 4;
          case "gpus-2" -> 2;
          default -> 1;
        };
    Map<String, String> labels = new LinkedHashMap<>(Map.of("app", name));
    if (name.equals("serving") || name.equals("dra-2")) {
      labels.put(SoakChecker.TIER_LABEL, "serving"); // the tier that never shares a GPU
    } else if (name.equals(SHARED)) {
      labels.put(SoakChecker.TIER_LABEL, "shared"); // the stack's tier that may
    }
    var spec =
        switch (name) {
          case "dra-2" -> DraGpus.podSpec(TWO_GPUS);
          case SHARED -> DraGpus.podSpec(ONE_SHARE);
          default -> Scenario.inferencePodOf(gpus).build().getSpec();
        };
    return new DeploymentBuilder()
        .withNewMetadata()
        .withName(name)
        .endMetadata()
        .withNewSpec()
        .withReplicas(0)
        .withNewSelector()
        .withMatchLabels(Map.of("app", name))
        .endSelector()
        .withNewTemplate()
        .withNewMetadata()
        .withLabels(labels)
        .withFinalizers(stopsSlowly(name) ? List.of(SLOW_STOP_FINALIZER) : List.of())
        .endMetadata()
        .withSpec(spec)
        .endTemplate()
        .endSpec()
        .build();
  }

  /** The Deployments whose pods hold GPUs through claims stop slowly, as model servers do. */
  private static boolean stopsSlowly(String deployment) {
    return deployment.equals("dra-2") || deployment.equals(SHARED);
  }

  private Pod groupMember(String group, int size, int index) {
    return Scenario.inferencePodOf(4)
        .editMetadata()
        .withName(group + "-" + index)
        .withNamespace(ns)
        .addToLabels("soak-group", group)
        .addToAnnotations(SoakChecker.GROUP, group)
        .addToAnnotations("kse.io/group-size", Integer.toString(size))
        .addToAnnotations("kse.io/group-index", Integer.toString(index))
        .endMetadata()
        .build();
  }
}
