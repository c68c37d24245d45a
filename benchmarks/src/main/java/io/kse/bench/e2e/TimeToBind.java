package io.kse.bench.e2e;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.kse.slurm.JobState;
import io.kse.slurm.JobSubmission;
import io.kse.slurm.PlaceholderTag;
import io.kse.slurm.SlurmClient;
import io.kse.slurm.SlurmJob;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * The end-to-end tier: time-to-bind on the real stack of {@code e2e/cluster/stack}, next to the two
 * floors measured in the same run — Slurm alone (REST submit → RUNNING for the same jobs) and
 * Kubernetes alone (the default kube-scheduler binding the same pods on the kwok nodes).
 *
 * <p>Every time is taken on this client's clock: just before the create/submit call, and when the
 * watch (pods) or a 50 ms poll (Slurm) first shows the result. Prints one {@code key=value} line
 * per figure, for {@code benchmarks/run} to collect.
 *
 * <pre>
 * java -cp benchmarks.jar io.kse.bench.e2e.TimeToBind --env DIR/env --pods 200 [--tag T]
 *      [--preemption PODS] [--pending-queue N] [--groups SIZES] [--our-part yes]
 *      [--only our-part]   # warm-up, then only our own part (wake-up → bound), e.g. at 5,000 nodes
 *      [--warm-up-pods N]  # then N more pods (bursts of --pods), and the burst again: "warm"
 *      [--only warm]       # only that: N pods, then the measured burst (e.g. to compare builds)
 *      [--only tpu-slices] # on a stack with --tpu-blocks 4,4,8: a 4-host slice, a 2x4 multislice
 *      [--only shared-gpus] # on a stack with --gpu-shards 4: quarter-GPU pods (issue 46)
 *      [--jfr FILE]        # a JFR recording of the extender over the warm burst (jcmd)
 * </pre>
 */
public final class TimeToBind {
  private static final String OURS = "slurm-inference";
  private static final int CREATORS = 8;

  private final BenchStack stack;
  private final KubernetesClient kube;
  private final SlurmClient slurm;
  private final String tag;
  private final CpuMeter cpu;
  private final ApiRequests api;

  /** How often the Slurm floor looks at Slurm: as often, and as cheaply, as our cache does. */
  private final long slurmObserverMs;

  private TimeToBind(BenchStack stack, String tag) {
    this.stack = stack;
    this.tag = tag;
    this.kube = stack.kube();
    this.cpu = CpuMeter.of(stack);
    this.api = new ApiRequests(kube);
    this.slurmObserverMs = 500; // KSE_SLURM_POLL_INTERVAL_MS's default, which the stack runs
    this.slurm = stack.slurm();
  }

  public static void main(String[] args) throws Exception {
    Map<String, String> a = BenchStack.args(args);
    if (!a.containsKey("env") || !a.containsKey("stack")) {
      System.err.println(
          "usage: TimeToBind --env DIR/env --stack e2e/cluster/stack --pods N [--gpus G] [--tag T]"
              + " [--preemption PODS] [--pending-queue N] [--groups SIZES] [--our-part yes]"
              + " [--only our-part] [--warm-up-pods N] [--only warm] [--only tpu-slices]"
              + " [--only shared-gpus] [--jfr FILE]");
      System.exit(2);
    }
    TimeToBind b = new TimeToBind(BenchStack.from(a), a.getOrDefault("tag", "run"));
    int pods = Integer.parseInt(a.getOrDefault("pods", "200"));
    int gpus = Integer.parseInt(a.getOrDefault("gpus", "1"));
    int pendingQueue = Integer.parseInt(a.getOrDefault("pending-queue", "0"));
    int warmUpPods = Integer.parseInt(a.getOrDefault("warm-up-pods", "0"));
    Optional<Path> jfr = Optional.ofNullable(a.get("jfr")).map(Path::of);
    try {
      if ("warm".equals(a.get("only"))) { // a long-running extender's cost per pod, alone
        b.warm(pods, gpus, warmUpPods, jfr);
        b.kube.close();
        System.exit(0);
      }
      if ("shared-gpus".equals(a.get("only"))) { // a stack with --gpu-shards 4 (issue 46)
        b.podsBound("bench-warm-up-" + b.tag, OURS, 16, gpus, null);
        b.sharedGpus(4, 5);
        b.kube.close();
        System.exit(0);
      }
      if ("tpu-slices".equals(a.get("only"))) { // a stack with --tpu-blocks 4,4,8 (issue 45)
        b.podsBound("bench-warm-up-" + b.tag, OURS, 16, gpus, null);
        b.tpuSlices(5);
        b.kube.close();
        System.exit(0);
      }
      if ("our-part".equals(a.get("only"))) { // the cost of a wake-up alone, e.g. at 5,000 nodes
        b.podsBound("bench-warm-up-" + b.tag, OURS, 16, gpus, null);
        b.ourPart();
        double[] filter = b.filterLatency();
        b.line("filter_mean_us", String.format("%.1f", filter[0]));
        b.line("nodes_in_kubernetes", Integer.toString(b.kube.nodes().list().getItems().size()));
        b.kube.close();
        System.exit(0);
      }
      List<Long> held = pendingQueue > 0 ? b.holdTrainingJobs(pendingQueue) : List.of();
      // the floors run without the extender: it would take the floor's tagged jobs for orphans
      b.stack.command("extender-stop");
      Run slurmFloor = b.slurmFloor(pods, gpus);
      Run kubeFloor = b.kubeFloor(pods, gpus);
      b.stack.command("extender-start");
      // a freshly started JVM compiles its hot paths during its first pods; the floors' processes
      // are long warm, and so is an extender in production: 16 pods first, not measured
      b.podsBound("bench-warm-up-" + b.tag, OURS, 16, gpus, null);
      Map<String, Double> slurmCallsBefore = b.slurmCalls();
      Run ours = b.ours(pods, gpus);
      b.slurmCallsPerPod("", slurmCallsBefore, b.slurmCalls(), ours.bound().size());
      b.report("slurm_floor", slurmFloor);
      b.report("kube_floor", kubeFloor);
      b.report("ttb", ours);
      b.line("pods_per_s", String.format("%.1f", ours.podsPerSecond()));
      b.line(
          "ttb_ratio_to_floors",
          String.format(
              "%.2f", ours.ttb().p50() / (slurmFloor.ttb().p50() + kubeFloor.ttb().p50())));
      // same t0 (each burst's start): ours against the two stages done one after the other
      b.line(
          "ttb_from_start_ratio",
          String.format(
              "%.2f",
              ours.fromStart().p50()
                  / (slurmFloor.fromStart().p50() + kubeFloor.fromStart().p50())));
      b.line(
          "ttb_makespan_ratio",
          String.format(
              "%.2f", ours.makespanMs() / (slurmFloor.makespanMs() + kubeFloor.makespanMs())));
      b.line(
          "ttb_makespan_ratio_to_slower_floor",
          String.format(
              "%.2f",
              ours.makespanMs() / Math.max(slurmFloor.makespanMs(), kubeFloor.makespanMs())));
      b.cost("ours", ours);
      b.cost("slurm_floor", slurmFloor);
      b.cost("kube_floor", kubeFloor);
      b.line(
          "cpu_ms_per_pod_total_floors",
          String.format("%.1f", slurmFloor.cpuMsPerPod() + kubeFloor.cpuMsPerPod()));
      if (a.containsKey("our-part")) {
        b.ourPart();
      }
      double[] filter = b.filterLatency();
      b.line("filter_mean_us", String.format("%.1f", filter[0]));
      b.line("filter_within_1ms_pct", String.format("%.1f", filter[1]));
      b.line("pending_queue", Integer.toString(pendingQueue));
      if (a.containsKey("preemption")) {
        b.preemption(Integer.parseInt(a.get("preemption")));
      }
      if (a.containsKey("groups")) { // e.g. 2,8: group sizes, 5 groups of each
        for (String size : a.get("groups").split(",")) {
          b.groups(Integer.parseInt(size.trim()), 5, "group_ttb_%s_size" + size.trim());
        }
      }
      b.scancel(held);
      if (warmUpPods > 0) { // last: the runs above keep the figures of a freshly started extender
        b.warm(pods, gpus, warmUpPods, jfr);
      }
    } finally {
      b.kube.close();
    }
    System.exit(0); // the Slurm client's and informers' threads are not daemons
  }

  // ------------------------------------------------------------------------------ the three runs

  /**
   * Slurm alone: the same placeholder-shaped jobs, REST submit → first seen RUNNING, seen by an
   * incremental poll (jobs changed since the last look) at our cache's interval.
   */
  private Run slurmFloor(int n, int gpus) throws Exception {
    Map<Long, Long> submitted = new ConcurrentHashMap<>();
    ExecutorService pool = Executors.newFixedThreadPool(CREATORS);
    Map<String, Long> cpuBefore = cpu.snapshot();
    Map<String, Long> apiBefore = api.snapshot();
    long first = System.nanoTime();
    for (int i = 0; i < n; i++) {
      int k = i;
      pool.execute(
          () -> {
            JobSubmission s = stack.placeholderJob("bench-slurm-floor", "job-" + k, gpus).build();
            long t0 = System.nanoTime();
            submitted.put(slurm.submit(s), t0);
          });
    }
    pool.shutdown();
    pool.awaitTermination(5, TimeUnit.MINUTES);
    Map<Long, Long> running = new ConcurrentHashMap<>();
    long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(3);
    Instant since = Instant.EPOCH;
    while (running.size() < n && System.nanoTime() < deadline) {
      long now = System.nanoTime();
      Instant asked = Instant.now();
      for (SlurmJob j : slurm.jobsChangedSince(since).jobs()) {
        if (j.state() == JobState.RUNNING && submitted.containsKey(j.id())) {
          running.putIfAbsent(j.id(), now);
        }
      }
      since = asked.minusSeconds(1); // Slurm's update times have whole seconds
      Thread.sleep(slurmObserverMs);
    }
    Map<String, Long> cpuSpent = CpuMeter.spent(cpuBefore, cpu.snapshot());
    Map<String, Long> apiSpent = ApiRequests.spent(apiBefore, api.snapshot());
    submitted.keySet().forEach(this::cancelQuietly);
    awaitNoLive("bench-slurm-floor");
    Map<String, Long> start = new LinkedHashMap<>();
    Map<String, Long> end = new LinkedHashMap<>();
    submitted.forEach(
        (id, t0) -> {
          start.put(Long.toString(id), t0);
          if (running.containsKey(id)) {
            end.put(Long.toString(id), running.get(id));
          }
        });
    return Run.of(first, start, end, n, cpuSpent, apiSpent);
  }

  /** Kubernetes alone: the default scheduler binds the same pods on the kwok nodes. */
  private Run kubeFloor(int n, int gpus) throws Exception {
    return podsBound("bench-kube-floor-" + tag, "default-scheduler", n, gpus, null);
  }

  private Run ours(int n, int gpus) throws Exception {
    return podsBound("bench-kse-" + tag, OURS, n, gpus, null);
  }

  /**
   * The same burst from an extender that has already bound {@code warmUp} more pods (bursts of
   * {@code n}, not measured), as a long-running extender has: its JIT done, its caches settled.
   * Costs under "ours_warm"; with {@code jfr}, the extender's profile over the measured burst.
   */
  private void warm(int n, int gpus, int warmUp, Optional<Path> jfr) throws Exception {
    int done = 0;
    for (int round = 0; done < warmUp; round++) {
      int k = Math.min(n, warmUp - done);
      podsBound("bench-warm-" + round + "-" + tag, OURS, k, gpus, null);
      done += k;
    }
    line("warm_up_pods", Integer.toString(done));
    if (jfr.isPresent()) {
      jcmd("JFR.start", "name=kse-warm", "settings=profile");
    }
    Map<String, Double> slurmCallsBefore = slurmCalls();
    Run r = podsBound("bench-kse-warm-" + tag, OURS, n, gpus, null);
    if (jfr.isPresent()) {
      jcmd("JFR.stop", "name=kse-warm", "filename=" + jfr.get().toAbsolutePath());
      line("jfr", jfr.get().toAbsolutePath().toString());
    }
    slurmCallsPerPod("_warm", slurmCallsBefore, slurmCalls(), r.bound().size());
    report("ttb_warm", r);
    cost("ours_warm", r);
  }

  /** A diagnostic command to the stack's extender JVM (its PID file), e.g. a JFR recording. */
  private void jcmd(String... command) throws IOException {
    String pid =
        java.nio.file.Files.readString(Path.of(stack.env("KSE_E2E_DIR"), "run", "extender.pid"))
            .trim();
    List<String> cmd = new ArrayList<>(List.of("jcmd", pid));
    cmd.addAll(List.of(command));
    System.err.println(BenchStack.exec(cmd, Map.of()).trim());
  }

  /** Every GPU node full of training; {@code n} 8-GPU pods each need a Slurm preemption. */
  private void preemption(int n) throws Exception {
    List<Long> training = new ArrayList<>();
    String[] nodes = stack.env("KSE_E2E_GPU_NODES").split(",");
    for (String node : nodes) {
      training.add(sbatch("-p", "training", "--exclusive", "-w", node, "--gres=gpu:h100:8"));
    }
    long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
    while (System.nanoTime() < deadline
        && slurm.jobsChangedSince(Instant.EPOCH).jobs().stream()
                .filter(j -> training.contains(j.id()) && j.state() == JobState.RUNNING)
                .count()
            < nodes.length) {
      Thread.sleep(200);
    }
    Map<String, Long> allocatedAt = new ConcurrentHashMap<>();
    Run r = podsBound("bench-preempt-" + tag, OURS, n, 8, allocatedAt);
    report("preemption_ttb", r.ttb());
    report("preemption_slurm_part", slurmPart(r, allocatedAt));
    report("preemption_our_part", ourPart(r, allocatedAt));
    scancel(training);
  }

  /** Slurm's part of each pod's time: pod created → its placeholder seen RUNNING (50 ms polls). */
  private static Stats slurmPart(Run r, Map<String, Long> allocatedAt) {
    List<Long> d = new ArrayList<>();
    r.created()
        .forEach(
            (name, t0) -> Optional.ofNullable(allocatedAt.get(name)).ifPresent(a -> d.add(a - t0)));
    return Stats.ofDurations(d);
  }

  /** Our part: placeholder seen RUNNING → pod seen bound. */
  private static Stats ourPart(Run r, Map<String, Long> allocatedAt) {
    return Stats.ofDurations(ourPartNanos(r, allocatedAt));
  }

  private static List<Long> ourPartNanos(Run r, Map<String, Long> allocatedAt) {
    List<Long> d = new ArrayList<>();
    r.bound()
        .forEach(
            (name, bound) ->
                Optional.ofNullable(allocatedAt.get(name))
                    .ifPresent(a -> d.add(Math.max(0, bound - a))));
    return d;
  }

  /**
   * Our own part on free capacity, with Slurm's allocation hint and without it (the stack's hint
   * entries moved aside): 10 single pods one after the other, then a burst of 64 — from the
   * placeholder seen RUNNING to the pod bound.
   */
  private void ourPart() throws Exception {
    Path hints = Path.of(stack.env("KSE_LAB_DIR"), "etc", "kse-allocation-hint.d");
    Path aside = Path.of(stack.env("KSE_LAB_DIR"), "etc", "kse-allocation-hint.set-aside");
    ourPart("");
    java.nio.file.Files.move(hints, aside);
    try {
      ourPart("_no_hint");
    } finally {
      java.nio.file.Files.move(aside, hints);
    }
  }

  private void ourPart(String suffix) throws Exception {
    String name = suffix.replace('_', '-');
    List<Long> singles = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      Map<String, Long> allocatedAt = new ConcurrentHashMap<>();
      Run r = podsBound("bench-single" + name + "-" + i + "-" + tag, OURS, 1, 1, allocatedAt);
      singles.addAll(ourPartNanos(r, allocatedAt));
    }
    Stats single = Stats.ofDurations(singles);
    line("our_part_p50_ms_single" + suffix, String.format("%.0f", single.p50()));
    line("our_part_p95_ms_single" + suffix, String.format("%.0f", single.p95()));
    Map<String, Long> allocatedAt = new ConcurrentHashMap<>();
    Run burst = podsBound("bench-burst64" + name + "-" + tag, OURS, 64, 1, allocatedAt);
    Stats b = ourPart(burst, allocatedAt);
    line("our_part_p50_ms_burst64" + suffix, String.format("%.0f", b.p50()));
    line("our_part_p95_ms_burst64" + suffix, String.format("%.0f", b.p95()));
    report("burst64_ttb" + suffix, burst);
  }

  // ------------------------------------------------------------------------------ pods

  /**
   * One burst: when each item started (its create or submit call) and ended (seen bound or
   * RUNNING), the burst's start (t0 for all), and the CPU each component spent from t0 to the last
   * end.
   */
  private record Run(
      long first,
      Map<String, Long> created,
      Map<String, Long> bound,
      int total,
      Map<String, Long> cpuMs,
      Map<String, Long> apiRequests) {
    static Run of(
        long first,
        Map<String, Long> created,
        Map<String, Long> bound,
        int total,
        Map<String, Long> cpuMs,
        Map<String, Long> apiRequests) {
      return new Run(first, Map.copyOf(created), Map.copyOf(bound), total, cpuMs, apiRequests);
    }

    /** Per item: its own start → its end. */
    Stats ttb() {
      return Stats.of(created, bound, Function.identity(), total);
    }

    /** Per item, every clock started at the burst's start. */
    Stats fromStart() {
      Map<String, Long> t0 = new LinkedHashMap<>();
      created.keySet().forEach(k -> t0.put(k, first));
      return Stats.of(t0, bound, Function.identity(), total);
    }

    double makespanMs() {
      return (bound.values().stream().mapToLong(Long::longValue).max().orElse(first) - first) / 1e6;
    }

    double podsPerSecond() {
      return bound.size() / (makespanMs() / 1e3);
    }

    /** Every process's CPU per bound pod (a process's parts, e.g. "extender.jit", not again). */
    double cpuMsPerPod() {
      return cpuMs.entrySet().stream()
              .filter(e -> !e.getKey().contains("."))
              .mapToLong(Map.Entry::getValue)
              .sum()
          / (double) Math.max(1, bound.size());
    }
  }

  /**
   * Creates {@code n} pods at once (from {@value #CREATORS} threads) and records when each is seen
   * bound; with {@code allocatedAt}, also when its Slurm placeholder is first seen RUNNING.
   */
  private Run podsBound(String ns, String scheduler, int n, int gpus, Map<String, Long> allocatedAt)
      throws Exception {
    return podsBound(ns, scheduler, n, gpus, allocatedAt, name -> Map.of());
  }

  /**
   * TPU slices (issue 45): {@code rounds} groups of 4 pods asking one v5p 2x2x4 slice, then of 8
   * asking a multislice of two, one at a time on free slices; each from its first pod's creation to
   * its last member bound.
   */
  private void tpuSlices(int rounds) throws Exception {
    tpuTopology = "2x2x4";
    try {
      groups(4, rounds, "tpu_slice_ttb_%s_2x2x4");
      groups(8, rounds, "tpu_multislice_ttb_%s_2x2x4x2");
    } finally {
      tpuTopology = null;
    }
  }

  /**
   * Multi-node groups: {@code rounds} groups of {@code size} 8-GPU pods ({@code kse.io/group}), one
   * at a time on free capacity; each from its first pod's creation to its last member bound. {@code
   * key}: the figures' names, {@code %s} standing for p50_ms, p95_ms, done.
   */
  private void groups(int size, int rounds, String key) throws Exception {
    List<Long> times = new ArrayList<>();
    for (int r = 0; r < rounds; r++) {
      Run run =
          podsBound(
              "bench-group-" + size + "-" + r + "-" + tag,
              OURS,
              size,
              8,
              null,
              name ->
                  Map.of(
                      "kse.io/group", "g",
                      "kse.io/group-size", Integer.toString(size),
                      "kse.io/group-index", name.substring("pod-".length())));
      if (run.bound().size() != size) {
        System.err.println(
            "group of "
                + size
                + " not bound whole ("
                + run.bound().size()
                + "): stopping this size");
        break;
      }
      long first = run.created().values().stream().mapToLong(Long::longValue).min().orElseThrow();
      long last = run.bound().values().stream().mapToLong(Long::longValue).max().orElseThrow();
      times.add(last - first);
    }
    Stats s = Stats.ofDurations(times);
    line(String.format(key, "p50_ms"), String.format("%.0f", s.p50()));
    line(String.format(key, "p95_ms"), String.format("%.0f", s.p95()));
    line(String.format(key, "done"), times.size() + "/" + rounds);
  }

  private Run podsBound(
      String ns,
      String scheduler,
      int n,
      int gpus,
      Map<String, Long> allocatedAt,
      Function<String, Map<String, String>> annotations)
      throws Exception {
    kube.namespaces()
        .resource(new NamespaceBuilder().withNewMetadata().withName(ns).endMetadata().build())
        .create();
    while (kube.serviceAccounts().inNamespace(ns).withName("default").get() == null) {
      Thread.sleep(100);
    }
    if (shareTemplate
        != null) { // what the pods' annotation names (manifests/base/gpu-share-claims.yaml)
      kube.resource(
              ("apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\n"
                      + "metadata: {name: %s, namespace: %s}\n"
                      + "spec:\n  spec:\n    devices:\n      requests:\n"
                      + "        - name: gpus\n          exactly: {deviceClassName: gpu.nvidia.com,"
                      + " capacity: {requests: {shares: \"1\"}}}\n")
                  .formatted(shareTemplate, ns))
          .create();
    }
    Map<String, Long> created = new ConcurrentHashMap<>();
    Map<String, Long> bound = new ConcurrentHashMap<>();
    SharedIndexInformer<Pod> informer =
        kube.pods()
            .inNamespace(ns)
            .inform(
                new ResourceEventHandler<>() {
                  @Override
                  public void onAdd(Pod p) {
                    seen(p);
                  }

                  @Override
                  public void onUpdate(Pod o, Pod p) {
                    seen(p);
                  }

                  @Override
                  public void onDelete(Pod p, boolean unknown) {}

                  private void seen(Pod p) {
                    if (p.getSpec().getNodeName() != null) {
                      bound.putIfAbsent(p.getMetadata().getName(), System.nanoTime());
                    }
                  }
                },
                0);
    Thread poller = null;
    if (allocatedAt != null && n == 1) {
      // before the pod exists: its placeholder's id comes after every id Slurm has now
      long firstId =
          slurm.jobsChangedSince(Instant.EPOCH).jobs().stream()
                  .mapToLong(SlurmJob::id)
                  .max()
                  .orElse(0)
              + 1;
      poller = new Thread(() -> watchOneJob(ns, allocatedAt, firstId));
      poller.start();
    } else if (allocatedAt != null) {
      poller =
          new Thread(
              () -> {
                while (!Thread.currentThread().isInterrupted() && allocatedAt.size() < n) {
                  long now = System.nanoTime();
                  for (SlurmJob j : slurm.jobsChangedSince(Instant.EPOCH).jobs()) {
                    j.placeholder()
                        .filter(t -> t.namespace().equals(ns))
                        .filter(t -> j.state() == JobState.RUNNING)
                        .ifPresent(t -> allocatedAt.putIfAbsent(t.name(), now));
                  }
                  try {
                    Thread.sleep(50);
                  } catch (InterruptedException e) {
                    return;
                  }
                }
              });
      poller.start();
    }
    ExecutorService pool = Executors.newFixedThreadPool(CREATORS);
    Map<String, Long> cpuBefore = cpu.snapshot();
    Map<String, Long> apiBefore = api.snapshot();
    long first = System.nanoTime();
    for (int i = 0; i < n; i++) {
      String name = "pod-" + i;
      pool.execute(
          () -> {
            Pod p = pod(ns, name, scheduler, gpus);
            Map<String, String> a = new java.util.HashMap<>(annotations.apply(name));
            if (shareTemplate != null) {
              a.put("kse.io/gpu-share-template", shareTemplate);
            }
            p.getMetadata().setAnnotations(a);
            created.put(name, System.nanoTime());
            kube.pods().inNamespace(ns).resource(p).create();
          });
    }
    pool.shutdown();
    pool.awaitTermination(5, TimeUnit.MINUTES);
    long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(5);
    while (bound.size() < n && System.nanoTime() < deadline) {
      Thread.sleep(10);
    }
    Map<String, Long> cpuSpent = CpuMeter.spent(cpuBefore, cpu.snapshot());
    Map<String, Long> apiSpent = ApiRequests.spent(apiBefore, api.settled());
    if (poller != null) {
      poller.interrupt();
    }
    informer.close();
    Run run = Run.of(first, created, bound, n, cpuSpent, apiSpent);
    if (!keepNamespace) {
      deleteNamespace(ns);
    }
    return run;
  }

  private void deleteNamespace(String ns) throws Exception {
    kube.namespaces().withName(ns).delete();
    while (kube.namespaces().withName(ns).get() != null) {
      Thread.sleep(200);
    }
    awaitNoLive(ns);
  }

  /**
   * One pod's placeholder seen RUNNING within 5 ms: Slurm numbers jobs in order, so the next job
   * ids are read one by one (a few KB each) until one is this namespace's, then that job alone. A
   * 50 ms listing of the whole job table was slower than the hint-woken extender (the pod was often
   * bound before the listing showed its job running).
   */
  private void watchOneJob(String ns, Map<String, Long> allocatedAt, long firstId) {
    long next = firstId;
    long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
    while (!Thread.currentThread().isInterrupted() && System.nanoTime() < deadline) {
      long now = System.nanoTime();
      Optional<SlurmJob> j = slurm.job(next);
      if (j.isPresent()) {
        Optional<PlaceholderTag> t = j.get().placeholder();
        if (t.isEmpty() || !t.get().namespace().equals(ns) || j.get().state().isFinal()) {
          next++; // someone else's, or a replaced placeholder: the next id
          continue;
        }
        if (j.get().state() == JobState.RUNNING) {
          allocatedAt.putIfAbsent(t.get().name(), now);
          return;
        }
      }
      try {
        Thread.sleep(5);
      } catch (InterruptedException e) {
        return;
      }
    }
  }

  /**
   * Shared GPUs (issue 46), published as NVIDIA's DRA driver does (each GPU with {@code shares}
   * consumable shares) on a stack with {@code --gpu-shards}: {@code rounds} single quarter-GPU pods
   * one at a time, creation → bound; then 8 at once, and how many GPUs they hold per replica (a
   * whole-GPU replica holds 1).
   */
  private void sharedGpus(int shares, int rounds) throws Exception {
    publishSharedGpus(shares);
    shareTemplate = "quarter";
    try {
      List<Long> times = new ArrayList<>();
      for (int r = 0; r < rounds; r++) {
        Run run = podsBound("bench-shared-" + r + "-" + tag, OURS, 1, 0, null);
        if (run.bound().size() == 1) {
          times.add(
              run.bound().values().iterator().next() - run.created().values().iterator().next());
        }
      }
      Stats s = Stats.ofDurations(times);
      line("shared_ttb_p50_ms", String.format("%.0f", s.p50()));
      line("shared_ttb_done", times.size() + "/" + rounds);
      keepNamespace = true;
      String ns = "bench-shared-eight-" + tag;
      Run eight = podsBound(ns, OURS, 8, 0, null);
      java.util.Set<String> held = new java.util.TreeSet<>();
      for (Pod p : kube.pods().inNamespace(ns).list().getItems()) {
        for (var c : p.getStatus().getResourceClaimStatuses()) {
          var claim =
              kube.resources(io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim.class)
                  .inNamespace(ns)
                  .withName(c.getResourceClaimName())
                  .get();
          claim
              .getStatus()
              .getAllocation()
              .getDevices()
              .getResults()
              .forEach(d -> held.add(p.getSpec().getNodeName() + "/" + d.getDevice()));
        }
      }
      line("shared_replicas_bound_of_8", Integer.toString(eight.bound().size()));
      line("shared_gpus_held_by_8", Integer.toString(held.size()));
      line("shared_gpus_per_replica", String.format("%.2f", held.size() / 8.0));
      keepNamespace = false;
      deleteNamespace(ns);
    } finally {
      shareTemplate = null;
      keepNamespace = false;
    }
  }

  /** The DeviceClass and each GPU node's ResourceSlice, every GPU with {@code shares} shares. */
  private void publishSharedGpus(int shares) {
    kube.resource(
            """
            apiVersion: resource.k8s.io/v1
            kind: DeviceClass
            metadata: {name: gpu.nvidia.com}
            spec:
              selectors: [{cel: {expression: "device.driver == 'gpu.nvidia.com'"}}]
            """)
        .serverSideApply();
    for (String node : stack.env("KSE_E2E_GPU_NODES").split(",")) {
      StringBuilder devices = new StringBuilder();
      for (int i = 0; i < 8; i++) {
        devices.append(
            "  - {name: gpu-%d, attributes: {index: {int: %d}}, allowMultipleAllocations: true,"
                    .formatted(i, i)
                + " capacity: {shares: {value: \"%d\"}}}\n".formatted(shares));
      }
      kube.resource(
              ("apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\n"
                          + "metadata: {name: bench-gpus-%s}\n"
                          + "spec:\n  driver: gpu.nvidia.com\n  nodeName: %s\n"
                          + "  pool: {name: %s, generation: 1, resourceSliceCount: 1}\n  devices:\n")
                      .formatted(node, node, node)
                  + devices)
          .serverSideApply();
    }
  }

  /** The claim template the pods made now name for their share of a GPU; null: none. */
  private volatile String shareTemplate;

  /** Whether podsBound leaves its namespace for the caller to read and delete. */
  private volatile boolean keepNamespace;

  /** The slice topology the pods made now ask, TPU chips instead of GPUs; null: GPU pods. */
  private volatile String tpuTopology;

  private Pod pod(String ns, String name, String scheduler, int gpus) {
    Pod p = gpuPod(ns, name, scheduler, gpus);
    if (shareTemplate != null) { // a quarter GPU: its claim comes by annotation, no whole GPU
      p.getMetadata().setLabels(Map.of("kse-test/tier", "shared"));
      p.getSpec()
          .getContainers()
          .get(0)
          .getResources()
          .setLimits(Map.of("memory", new Quantity("1Gi")));
    }
    if (tpuTopology != null) { // as GKE's TPU pods ask: the chips of one host, the slice by label
      p.getSpec()
          .setNodeSelector(
              Map.of(
                  "cloud.google.com/gke-tpu-accelerator",
                  "tpu-v5p-slice",
                  "cloud.google.com/gke-tpu-topology",
                  tpuTopology));
      p.getSpec()
          .getContainers()
          .get(0)
          .getResources()
          .setLimits(Map.of("google.com/tpu", new Quantity("4"), "memory", new Quantity("1Gi")));
    }
    return p;
  }

  private static Pod gpuPod(String ns, String name, String scheduler, int gpus) {
    return new PodBuilder()
        .withNewMetadata()
        .withName(name)
        .withNamespace(ns)
        .endMetadata()
        .withNewSpec()
        .withSchedulerName(scheduler)
        .withTerminationGracePeriodSeconds(0L)
        // the default scheduler must stay off the CPU-only nodes too, like Slurm
        .withNodeSelector(Map.of("type", "kwok"))
        .addNewContainer()
        .withName("server")
        .withImage("registry.example/model-server:1")
        .withNewResources()
        .withRequests(Map.of("cpu", new Quantity("1"), "memory", new Quantity("1Gi")))
        .withLimits(
            Map.of(
                "nvidia.com/gpu",
                new Quantity(Integer.toString(gpus)),
                "memory",
                new Quantity("1Gi")))
        .endResources()
        .endContainer()
        .endSpec()
        .build();
  }

  // ------------------------------------------------------------------------------ Slurm helpers

  /** A long pending queue: {@code n} held training jobs, which the extender's cache must carry. */
  private List<Long> holdTrainingJobs(int n) throws Exception {
    List<Long> ids = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      ids.add(sbatch("-p", "training", "--hold", "--gres=gpu:h100:8"));
    }
    return ids;
  }

  /** A training job by sbatch (root, munge): not one of our placeholders. */
  private long sbatch(String... args) throws Exception {
    List<String> cmd = new ArrayList<>(List.of("sbatch", "--parsable", "-J", "bench-training"));
    cmd.addAll(List.of(args));
    cmd.addAll(
        List.of("-o", "/dev/null", "-D", stack.env("KSE_LAB_JOB_DIR"), "--wrap", "sleep 3600"));
    return Long.parseLong(slurmCli(cmd).trim().split(";")[0]);
  }

  private void scancel(List<Long> ids) throws Exception {
    stack.scancel(ids);
    Thread.sleep(1500);
  }

  private String slurmCli(List<String> cmd) {
    return BenchStack.exec(cmd, Map.of("SLURM_CONF", stack.env("SLURM_CONF")));
  }

  private void cancelQuietly(long id) {
    try {
      slurm.cancel(id);
    } catch (RuntimeException e) {
      // already gone
    }
  }

  /**
   * Waits until no job tagged with {@code namespace} is alive: the next run starts on free GPUs.
   */
  private void awaitNoLive(String namespace) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
    while (System.nanoTime() < deadline
        && slurm.jobsChangedSince(Instant.EPOCH).jobs().stream()
            .anyMatch(
                j ->
                    !j.state().isFinal()
                        && j.state() != JobState.COMPLETING
                        && j.placeholder()
                            .map(t -> t.namespace().equals(namespace))
                            .orElse(false))) {
      Thread.sleep(200);
    }
    Thread.sleep(1500); // let slurmctld finish the epilogs of what ended
  }

  /**
   * The extender's own filter latency over its life, from its histogram: the mean (which the first,
   * cold calls dominate) and the share of calls answered within 1 ms.
   */
  private double[] filterLatency() {
    try {
      String metrics = extenderMetrics();
      double sum = 0;
      double count = 0;
      double fast = 0;
      for (String l : metrics.split("\n")) {
        double v = l.startsWith("kse_filter_duration_seconds") ? value(l) : 0;
        if (l.startsWith("kse_filter_duration_seconds_sum")) {
          sum += v;
        } else if (l.startsWith("kse_filter_duration_seconds_count")) {
          count += v;
        } else if (l.startsWith("kse_filter_duration_seconds_bucket")
            && l.contains("le=\"0.001\"")) {
          fast += v;
        }
      }
      return count == 0
          ? new double[] {Double.NaN, Double.NaN}
          : new double[] {sum / count * 1e6, 100 * fast / count};
    } catch (IOException | InterruptedException e) {
      return new double[] {Double.NaN, Double.NaN};
    }
  }

  private String extenderMetrics() throws IOException, InterruptedException {
    return HttpClient.newHttpClient()
        .send(
            HttpRequest.newBuilder(URI.create(stack.env("KSE_E2E_EXTENDER_URL") + "/metrics"))
                .build(),
            HttpResponse.BodyHandlers.ofString())
        .body();
  }

  /**
   * The extender's Slurm calls so far by operation (retries included), and their summed seconds
   * under the key {@code operation + "_seconds"}: empty when the extender is not running.
   */
  private Map<String, Double> slurmCalls() {
    Map<String, Double> calls = new java.util.TreeMap<>();
    try {
      for (String l : extenderMetrics().split("\n")) {
        boolean count = l.startsWith("kse_slurm_request_duration_seconds_count{");
        boolean sum = l.startsWith("kse_slurm_request_duration_seconds_sum{");
        java.util.regex.Matcher m =
            java.util.regex.Pattern.compile("operation=\"([^\"]+)\"").matcher(l);
        if ((count || sum) && m.find()) {
          calls.merge(m.group(1) + (sum ? "_seconds" : ""), value(l), Double::sum);
        }
      }
    } catch (IOException | InterruptedException e) {
      // no extender: no calls to count
    }
    return calls;
  }

  private static double value(String line) {
    return Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
  }

  // ------------------------------------------------------------------------------ output

  /** Per-item and same-t0 figures of a run. */
  private void report(String key, Run r) {
    report(key, r.ttb());
    Stats s = r.fromStart();
    line(key + "_from_start_p50_ms", String.format("%.0f", s.p50()));
    line(key + "_from_start_p99_ms", String.format("%.0f", s.p99()));
    line(key + "_makespan_ms", String.format("%.0f", r.makespanMs()));
  }

  /**
   * The extender's Slurm calls per bound pod by operation, and the mean latency of its submits (the
   * slurmrestd path {@code SubmitThroughput} measures alone).
   */
  private void slurmCallsPerPod(
      String run, Map<String, Double> before, Map<String, Double> after, int pods) {
    after.forEach(
        (op, v) -> {
          double d = v - before.getOrDefault(op, 0.0);
          if (!op.endsWith("_seconds") && d > 0) {
            line(
                "slurm_calls_per_pod" + run + "." + op,
                String.format("%.2f", d / Math.max(1, pods)));
          }
        });
    double submits = after.getOrDefault("submit", 0.0) - before.getOrDefault("submit", 0.0);
    double seconds =
        after.getOrDefault("submit_seconds", 0.0) - before.getOrDefault("submit_seconds", 0.0);
    if (submits > 0) {
      line("our_submit_mean_ms" + run, String.format("%.1f", seconds / submits * 1e3));
    }
  }

  /** CPU milliseconds per bound pod (or running job), per component and in total. */
  private void cost(String run, Run r) {
    double pods = Math.max(1, r.bound().size());
    r.cpuMs()
        .forEach(
            (component, ms) ->
                line("cpu_ms_per_pod." + run + "." + component, String.format("%.1f", ms / pods)));
    line("cpu_ms_per_pod_total_" + run, String.format("%.1f", r.cpuMsPerPod()));
    // what the API server wrote per pod, and for what: writes cost it and etcd most of their CPU
    line(
        "api_writes_per_pod_" + run,
        String.format("%.2f", ApiRequests.writes(r.apiRequests()) / pods));
    r.apiRequests()
        .forEach(
            (what, count) -> {
              if (ApiRequests.isWrite(what)) {
                line(
                    "api_per_pod." + run + "." + what.replace(' ', '_'),
                    String.format("%.2f", count / pods));
              }
            });
    if (run.startsWith("ours")) {
      line(
          "cpu_ms_per_pod_extender" + run.substring("ours".length()),
          String.format("%.1f", r.cpuMs().getOrDefault("extender", 0L) / pods));
    }
  }

  private void report(String key, Stats s) {
    line(key + "_p50_ms", String.format("%.0f", s.p50()));
    line(key + "_p95_ms", String.format("%.0f", s.p95()));
    line(key + "_p99_ms", String.format("%.0f", s.p99()));
    line(key + "_done", s.done() + "/" + s.total());
  }

  private void line(String key, String value) {
    System.out.println(tag + "." + key + "=" + value);
  }
}
