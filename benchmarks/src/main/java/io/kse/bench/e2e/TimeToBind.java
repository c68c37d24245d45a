package io.kse.bench.e2e;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.kse.slurm.JobState;
import io.kse.slurm.JobSubmission;
import io.kse.slurm.SlurmClient;
import io.kse.slurm.SlurmJob;
import java.io.IOException;
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

  private final BenchStack stack;
  private final KubernetesClient kube;
  private final SlurmClient slurm;
  private final String tag;
  private final CpuMeter cpu;
  private final ApiRequests api;
  private final Bursts bursts;
  private final Figures out;
  private final ExtenderScrape scrape;

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
    this.bursts = new Bursts(kube, slurm, cpu, api);
    this.out = new Figures(tag);
    this.scrape = new ExtenderScrape(stack.env("KSE_E2E_EXTENDER_URL"), out);
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
        b.bursts.bound("bench-warm-up-" + b.tag, PodShape.gpus(OURS, gpus), 16);
        new SharedGpuBench(b.kube, b.bursts, b.out, OURS, b.gpuNodes()).run(4, 5);
        b.kube.close();
        System.exit(0);
      }
      if ("tpu-slices".equals(a.get("only"))) { // a stack with --tpu-blocks 4,4,8 (issue 45)
        b.bursts.bound("bench-warm-up-" + b.tag, PodShape.gpus(OURS, gpus), 16);
        new GroupBench(b.bursts, b.out, OURS).tpuSlices(5);
        b.kube.close();
        System.exit(0);
      }
      if ("our-part".equals(a.get("only"))) { // the cost of a wake-up alone, e.g. at 5,000 nodes
        b.bursts.bound("bench-warm-up-" + b.tag, PodShape.gpus(OURS, gpus), 16);
        b.ourPart();
        double[] filter = b.scrape.filterLatency();
        b.out.line("filter_mean_us", String.format("%.1f", filter[0]));
        b.out.line(
            "nodes_in_kubernetes", Integer.toString(b.kube.nodes().list().getItems().size()));
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
      b.bursts.bound("bench-warm-up-" + b.tag, PodShape.gpus(OURS, gpus), 16);
      Map<String, Double> slurmCallsBefore = b.scrape.slurmCalls();
      Run ours = b.ours(pods, gpus);
      b.scrape.slurmCallsPerPod("", slurmCallsBefore, b.scrape.slurmCalls(), ours.bound().size());
      b.out.report("slurm_floor", slurmFloor);
      b.out.report("kube_floor", kubeFloor);
      b.out.report("ttb", ours);
      b.out.line("pods_per_s", String.format("%.1f", ours.podsPerSecond()));
      b.out.line(
          "ttb_ratio_to_floors",
          String.format(
              "%.2f", ours.ttb().p50() / (slurmFloor.ttb().p50() + kubeFloor.ttb().p50())));
      // same t0 (each burst's start): ours against the two stages done one after the other
      b.out.line(
          "ttb_from_start_ratio",
          String.format(
              "%.2f",
              ours.fromStart().p50()
                  / (slurmFloor.fromStart().p50() + kubeFloor.fromStart().p50())));
      b.out.line(
          "ttb_makespan_ratio",
          String.format(
              "%.2f", ours.makespanMs() / (slurmFloor.makespanMs() + kubeFloor.makespanMs())));
      b.out.line(
          "ttb_makespan_ratio_to_slower_floor",
          String.format(
              "%.2f",
              ours.makespanMs() / Math.max(slurmFloor.makespanMs(), kubeFloor.makespanMs())));
      b.out.cost("ours", ours);
      b.out.cost("slurm_floor", slurmFloor);
      b.out.cost("kube_floor", kubeFloor);
      b.out.line(
          "cpu_ms_per_pod_total_floors",
          String.format("%.1f", slurmFloor.cpuMsPerPod() + kubeFloor.cpuMsPerPod()));
      if (a.containsKey("our-part")) {
        b.ourPart();
      }
      double[] filter = b.scrape.filterLatency();
      b.out.line("filter_mean_us", String.format("%.1f", filter[0]));
      b.out.line("filter_within_1ms_pct", String.format("%.1f", filter[1]));
      b.out.line("pending_queue", Integer.toString(pendingQueue));
      if (a.containsKey("preemption")) {
        b.preemption(Integer.parseInt(a.get("preemption")));
      }
      if (a.containsKey("groups")) { // e.g. 2,8: group sizes, 5 groups of each
        for (String size : a.get("groups").split(",")) {
          new GroupBench(b.bursts, b.out, OURS)
              .groups(Integer.parseInt(size.trim()), 5, "group_ttb_%s_size" + size.trim());
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
    Bursts.settle(cpu);
    Map<Long, Long> submitted = new ConcurrentHashMap<>();
    ExecutorService pool = Executors.newFixedThreadPool(Bursts.CREATORS);
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
    bursts.awaitNoLive("bench-slurm-floor");
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
    return bursts.bound("bench-kube-floor-" + tag, PodShape.gpus("default-scheduler", gpus), n);
  }

  private Run ours(int n, int gpus) throws Exception {
    return bursts.bound("bench-kse-" + tag, PodShape.gpus(OURS, gpus), n);
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
      bursts.bound("bench-warm-" + round + "-" + tag, PodShape.gpus(OURS, gpus), k);
      done += k;
    }
    out.line("warm_up_pods", Integer.toString(done));
    if (jfr.isPresent()) {
      jcmd("JFR.start", "name=kse-warm", "settings=profile");
    }
    Map<String, Double> slurmCallsBefore = scrape.slurmCalls();
    Run r = bursts.bound("bench-kse-warm-" + tag, PodShape.gpus(OURS, gpus), n);
    if (jfr.isPresent()) {
      jcmd("JFR.stop", "name=kse-warm", "filename=" + jfr.get().toAbsolutePath());
      out.line("jfr", jfr.get().toAbsolutePath().toString());
    }
    scrape.slurmCallsPerPod("_warm", slurmCallsBefore, scrape.slurmCalls(), r.bound().size());
    out.report("ttb_warm", r);
    out.cost("ours_warm", r);
  }

  private List<String> gpuNodes() {
    return List.of(stack.env("KSE_E2E_GPU_NODES").split(","));
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
    Run r = bursts.bound("bench-preempt-" + tag, PodShape.gpus(OURS, 8), n, allocatedAt, false);
    out.report("preemption_ttb", r.ttb());
    out.report("preemption_slurm_part", slurmPart(r, allocatedAt));
    out.report("preemption_our_part", ourPart(r, allocatedAt));
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
    gateLiftFloor(64, Bursts.CREATORS, "");
    gateLiftFloor(64, 64, "_all_at_once"); // as if every wake-up's write were in flight at once
    java.nio.file.Files.move(hints, aside);
    try {
      ourPart("_no_hint");
    } finally {
      java.nio.file.Files.move(aside, hints);
    }
  }

  /**
   * The floor of our part in a burst: the default scheduler alone binding {@code n} pods whose
   * gates are lifted at once by the write a wake-up makes, from {@code lifters} threads — what
   * Kubernetes costs from the wake-up on, with no extender in the path (the extender runs, idle: no
   * pod is its).
   */
  private void gateLiftFloor(int n, int lifters, String suffix) throws Exception {
    Run r =
        bursts.boundAfterGateLift(
            "bench-gate-lift" + suffix.replace('_', '-') + "-" + tag,
            PodShape.gpus("default-scheduler", 1),
            n,
            lifters);
    out.report("gate_lift_floor_burst" + n + suffix, r);
    out.cost("gate_lift_floor_burst" + n + suffix, r);
  }

  private void ourPart(String suffix) throws Exception {
    String name = suffix.replace('_', '-');
    List<Long> singles = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      Map<String, Long> allocatedAt = new ConcurrentHashMap<>();
      Run r =
          bursts.bound(
              "bench-single" + name + "-" + i + "-" + tag,
              PodShape.gpus(OURS, 1),
              1,
              allocatedAt,
              false);
      singles.addAll(ourPartNanos(r, allocatedAt));
    }
    Stats single = Stats.ofDurations(singles);
    out.line("our_part_p50_ms_single" + suffix, String.format("%.0f", single.p50()));
    out.line("our_part_p95_ms_single" + suffix, String.format("%.0f", single.p95()));
    Map<String, Long> allocatedAt = new ConcurrentHashMap<>();
    Run burst =
        bursts.bound(
            "bench-burst64" + name + "-" + tag, PodShape.gpus(OURS, 1), 64, allocatedAt, false);
    Stats b = ourPart(burst, allocatedAt);
    out.line("our_part_p50_ms_burst64" + suffix, String.format("%.0f", b.p50()));
    out.line("our_part_p95_ms_burst64" + suffix, String.format("%.0f", b.p95()));
    out.report("burst64_ttb" + suffix, burst);
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
}
