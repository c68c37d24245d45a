package io.kse.bench.e2e;

import io.kse.slurm.testing.BackgroundJobs;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;

/**
 * What the extender costs Slurm on the scale rig: Slurm 26.05 with thousands of GPU nodes made
 * {@code state=external}, other users' queues of 5,000 to 50,000 jobs with churn ({@link
 * BackgroundJobs}), and the extender following its own placeholders. For each queue size, two
 * windows of the same length: the extender stopped, then running (after its start-up and takeover
 * listings). Prints one {@code scale …} line per queue size: slurmctld's and slurmrestd's CPU in
 * each window, slurmctld's RPC time in all and for our Slurm user ({@code sdiag}), our share, the
 * extender's Slurm calls by operation and the bytes it read, its CPU and RSS (sampled every 5 s:
 * the highest and the last). Then a node drained and resumed in Slurm: how long until the extender
 * taints and untaints it in Kubernetes (the node trigger's way, or the node table's). Figures only.
 *
 * <pre>
 * java -cp benchmarks.jar io.kse.bench.e2e.ScaleLoad --env DIR/env --stack e2e/cluster/stack
 *      [--jobs 5000,20000,50000] [--seconds 60] [--running-seconds S] [--churn 5] [--tag T]
 *      [--drain-node ext-gpu-17]
 * </pre>
 *
 * {@code --running-seconds} (default: {@code --seconds}) should span the node table's and other
 * periodic listings' interval, so that their cost is in the figures, not between windows.
 */
public final class ScaleLoad {
  private ScaleLoad() {}

  public static void main(String[] args) throws Exception {
    Map<String, String> a = BenchStack.args(args);
    BenchStack stack = BenchStack.from(a);
    String tag = a.getOrDefault("tag", "run");
    int seconds = Integer.parseInt(a.getOrDefault("seconds", "60"));
    int runningSeconds = Integer.parseInt(a.getOrDefault("running-seconds", "" + seconds));
    String drainNode = a.getOrDefault("drain-node", "ext-gpu-17");
    int churn = Integer.parseInt(a.getOrDefault("churn", "5"));
    CpuMeter cpu = CpuMeter.of(stack);
    try (BackgroundJobs jobs =
        new BackgroundJobs(
            stack.env("KSE_LAB_REST_URL"),
            Path.of(stack.env("KSE_LAB_JWT_ROOT_FILE")),
            stack::scancel)) {
      boolean churning = false;
      for (String k : a.getOrDefault("jobs", "5000,20000,50000").split(",")) {
        int queue = Integer.parseInt(k.trim());
        long t0 = System.nanoTime();
        jobs.fillTo(queue);
        System.err.printf(
            "[scale] %d background jobs after %d s (%d failed requests)%n",
            jobs.size(), (System.nanoTime() - t0) / 1_000_000_000L, jobs.failures());
        if (!churning) {
          jobs.churn(churn);
          churning = true;
        }
        stack.command("extender-stop");
        Thread.sleep(5_000);
        Window stopped = Window.measure(stack, cpu, seconds, false);
        boolean ready = true;
        long started = System.nanoTime();
        try {
          stack.command("extender-start");
        } catch (IllegalStateException e) {
          // not ready within KSE_E2E_READY_WAIT_S (an extender that lists the whole job table each
          // pass never is with the
          // churn on: each job listing outlasts its timeout): measured as it runs, and said so
          ready = false;
          System.err.printf("[scale] the extender did not become ready: %s%n", e.getMessage());
        }
        // its start-up listing of the whole table, then its takeover's (the writer Lease): every
        // job's state and the jobs made since where slurmrestd has it, else a second listing; the
        // window begins 10 s after that read ended. RSS is sampled from the start: the listings
        // are what grows the heap.
        long until = started + 900_000_000_000L;
        double startRssMax = 0;
        while (!tookOver(extenderCounters(stack)) && System.nanoTime() < until) {
          startRssMax = Math.max(startRssMax, rssMiB(stack));
          Thread.sleep(1_000);
        }
        long tookOverS = (System.nanoTime() - started) / 1_000_000_000L;
        Thread.sleep(10_000);
        Window running = Window.measure(stack, cpu, runningSeconds, true);
        StringBuilder out = new StringBuilder("scale tag=").append(tag);
        out.append(" nodes=").append(nodeCount(stack));
        out.append(" background_jobs=").append(jobs.size());
        out.append(" churn_per_s=").append(churn);
        out.append(" extender_ready=").append(ready);
        stopped.append(out, "stopped");
        running.append(out, "running");
        out.append(String.format(" extender_rss_start_max_mib=%.0f", startRssMax));
        out.append(" took_over_s=").append(tookOverS);
        if (ready) { // one that never synced taints nothing: 10 minutes of waiting for nothing
          out.append(nodeEventLatency(stack, drainNode));
        }
        out.append(afterGc(stack));
        System.out.println(out);
      }
    }
  }

  /**
   * The writer has caught up: a catch-up (every job's state, then the jobs made since) ended after
   * the start-up listing, or a second listing did ({@code kse_slurm_job_table_reads_total}).
   */
  static boolean tookOver(Map<String, Double> counters) {
    double listings = counters.getOrDefault("table_reads_listing", 0.0);
    return listings >= 2
        || listings >= 1 && counters.getOrDefault("table_reads_catch_up", 0.0) >= 1;
  }

  private static final java.util.regex.Pattern TABLE_READS =
      java.util.regex.Pattern.compile(
          "^kse_slurm_job_table_reads_total\\{.*how=\"([a-z_]+)\".*} (\\S+)$");

  private static int nodeCount(BenchStack stack) {
    return Integer.parseInt(stack.env("KSE_LAB_NODES"))
        + Integer.parseInt(stack.env("KSE_LAB_EXTERNAL_NODES"));
  }

  /** One measured window: CPU by component, sdiag by user, the extender's calls and bytes. */
  private record Window(
      double perMinute,
      Map<String, Long> cpuMs,
      long allRpcUs,
      long allRpcs,
      long ourRpcUs,
      long ourRpcs,
      Map<String, Double> calls,
      double rssMiB,
      double rssMaxMiB) {

    static Window measure(BenchStack stack, CpuMeter cpu, int seconds, boolean extender)
        throws Exception {
      String us = stack.env("KSE_LAB_JWT_USER");
      Map<String, Map<String, Long>> rpcBefore = SlurmLoad.sdiagUsers(stack);
      Map<String, Long> cpuBefore = cpu.snapshot();
      Map<String, Double> callsBefore = extender ? extenderCounters(stack) : Map.of();
      double rssMax = 0;
      long end = System.nanoTime() + seconds * 1_000_000_000L;
      while (System.nanoTime() < end) {
        Thread.sleep(Math.min(5_000, Math.max(1, (end - System.nanoTime()) / 1_000_000)));
        if (extender) {
          rssMax = Math.max(rssMax, ScaleLoad.rssMiB(stack));
        }
      }
      Map<String, Double> calls =
          extender ? SlurmLoad.delta(callsBefore, extenderCounters(stack)) : Map.of();
      Map<String, Long> spent = CpuMeter.spent(cpuBefore, cpu.snapshot());
      Map<String, Map<String, Long>> rpcAfter = SlurmLoad.sdiagUsers(stack);
      long allUs = 0;
      long all = 0;
      for (var e : rpcAfter.entrySet()) {
        Map<String, Long> b = rpcBefore.getOrDefault(e.getKey(), Map.of());
        allUs += e.getValue().getOrDefault("us", 0L) - b.getOrDefault("us", 0L);
        all += e.getValue().getOrDefault("count", 0L) - b.getOrDefault("count", 0L);
      }
      Map<String, Long> ourAfter = rpcAfter.getOrDefault(us, Map.of());
      Map<String, Long> ourBefore = rpcBefore.getOrDefault(us, Map.of());
      return new Window(
          60.0 / seconds,
          spent,
          allUs,
          all,
          ourAfter.getOrDefault("us", 0L) - ourBefore.getOrDefault("us", 0L),
          ourAfter.getOrDefault("count", 0L) - ourBefore.getOrDefault("count", 0L),
          calls,
          extender ? ScaleLoad.rssMiB(stack) : 0,
          rssMax);
    }

    void append(StringBuilder out, String name) {
      out.append(
          String.format(
              " %s_slurmctld_cpu_s_per_min=%.2f %s_slurmrestd_cpu_s_per_min=%.2f"
                  + " %s_all_rpcs_per_min=%.0f %s_all_rpc_ms_per_min=%.0f",
              name,
              cpuMs.getOrDefault("slurmctld", 0L) / 1000.0 * perMinute,
              name,
              cpuMs.getOrDefault("slurmrestd", 0L) / 1000.0 * perMinute,
              name,
              allRpcs * perMinute,
              name,
              allRpcUs / 1000.0 * perMinute));
      if (!name.equals("running")) {
        return;
      }
      out.append(
          String.format(
              " our_rpcs_per_min=%.0f our_rpc_ms_per_min=%.0f our_rpc_time_share_pct=%.2f"
                  + " extender_cpu_s_per_min=%.2f extender_rss_mib=%.0f extender_rss_max_mib=%.0f"
                  + " window_s=%.0f",
              ourRpcs * perMinute,
              ourRpcUs / 1000.0 * perMinute,
              allRpcUs == 0 ? 0 : 100.0 * ourRpcUs / allRpcUs,
              cpuMs.getOrDefault("extender", 0L) / 1000.0 * perMinute,
              rssMiB,
              rssMaxMiB,
              60.0 / perMinute));
      for (var e : new TreeMap<>(calls).entrySet()) {
        out.append(String.format(" %s=%.1f", e.getKey(), e.getValue() * perMinute));
      }
    }
  }

  /**
   * An SRE drains a node in Slurm, then resumes it: milliseconds until the extender's taint is on
   * the Kubernetes node of that name, and until it is gone again (-1: not within 5 min).
   */
  static String nodeEventLatency(BenchStack stack, String node) throws Exception {
    Map<String, String> env = Map.of("SLURM_CONF", stack.env("SLURM_CONF"));
    String scontrol = stack.slurmCommand("scontrol");
    long t0 = System.nanoTime();
    BenchStack.exec(
        java.util.List.of(
            scontrol, "update", "nodename=" + node, "state=drain", "reason=kse-bench"),
        env);
    long tainted = untilTaint(stack, node, true, t0);
    long t1 = System.nanoTime();
    BenchStack.exec(java.util.List.of(scontrol, "update", "nodename=" + node, "state=resume"), env);
    long untainted = untilTaint(stack, node, false, t1);
    return String.format(" drain_to_taint_ms=%d resume_to_untaint_ms=%d", tainted, untainted);
  }

  private static long untilTaint(BenchStack stack, String node, boolean present, long since)
      throws InterruptedException {
    long deadline = since + 300_000_000_000L;
    while (System.nanoTime() < deadline) {
      var n = stack.kube().nodes().withName(node).get();
      boolean has =
          n != null
              && n.getSpec().getTaints() != null
              && n.getSpec().getTaints().stream()
                  .anyMatch(t -> "kse.io/slurm-unavailable".equals(t.getKey()));
      if (has == present) {
        return (System.nanoTime() - since) / 1_000_000;
      }
      Thread.sleep(200);
    }
    return -1;
  }

  /** The extender's Slurm calls by operation and the bytes it read, so far. */
  static Map<String, Double> extenderCounters(BenchStack stack) throws Exception {
    String metrics = SlurmLoad.extenderMetrics(stack); // one scrape: calls, bytes, table reads
    Map<String, Double> c = new TreeMap<>(SlurmLoad.slurmCalls(metrics));
    c.putAll(readsAndBytes(metrics));
    return c;
  }

  /** From the extender's metrics: the bytes it read of Slurm and its reads of the job table. */
  static Map<String, Double> readsAndBytes(String metrics) {
    Map<String, Double> c = new TreeMap<>();
    for (String line : metrics.split("\n")) {
      if (line.startsWith("kse_slurm_response_bytes_total")) {
        c.put("bytes_read", Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1)));
      }
      java.util.regex.Matcher reads = TABLE_READS.matcher(line);
      if (reads.matches()) {
        c.put("table_reads_" + reads.group(1), Double.parseDouble(reads.group(2)));
      }
    }
    return c;
  }

  /**
   * The extender's live heap and RSS just after a full GC (jcmd GC.run): what it holds, and whether
   * its RSS follows (the Deployment's free ratios give heap back after GC).
   */
  static String afterGc(BenchStack stack) throws Exception {
    String pid = Files.readString(extenderPid(stack)).trim();
    BenchStack.exec(java.util.List.of("jcmd", pid, "GC.run"), Map.of());
    String info = BenchStack.exec(java.util.List.of("jcmd", pid, "GC.heap_info"), Map.of());
    java.util.regex.Matcher m =
        java.util.regex.Pattern.compile("total (\\d+)K, used (\\d+)K").matcher(info);
    double used = m.find() ? Long.parseLong(m.group(2)) / 1024.0 : -1;
    double committed = used < 0 ? -1 : Long.parseLong(m.group(1)) / 1024.0;
    return String.format(
        " extender_heap_live_mib=%.0f extender_heap_committed_mib=%.0f extender_rss_after_gc_mib=%.0f",
        used, committed, rssMiB(stack));
  }

  private static Path extenderPid(BenchStack stack) {
    return Path.of(stack.env("KSE_E2E_DIR"), "run", "extender.pid");
  }

  static double rssMiB(BenchStack stack) throws Exception {
    Path pid = extenderPid(stack);
    for (String line :
        Files.readAllLines(Path.of("/proc", Files.readString(pid).trim(), "status"))) {
      if (line.startsWith("VmRSS:")) {
        return Long.parseLong(line.replaceAll("[^0-9]", "")) / 1024.0;
      }
    }
    return 0;
  }
}
