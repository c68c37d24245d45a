package io.kse.bench.e2e;

import io.kse.slurm.SlurmClient;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What the extender costs Slurm while it has no pods of its own, as other users' jobs grow (issue
 * 28's first table): K held jobs of another user, one of them touched every 200 ms as a busy
 * cluster's pending reasons are, then a window in which slurmrestd's CPU, the extender's Slurm
 * calls by operation (its own {@code kse_slurm_request_duration_seconds}) and slurmctld's RPCs for
 * our Slurm user ({@code sdiag}) are counted; and the size of one {@code GET jobs}. Figures only.
 *
 * <pre>
 * java -cp benchmarks.jar io.kse.bench.e2e.SlurmLoad --env DIR/env --stack e2e/cluster/stack
 *      [--jobs 20,1000,5000] [--seconds 60] [--tag T]
 * </pre>
 */
public final class SlurmLoad {
  private SlurmLoad() {}

  public static void main(String[] args) throws Exception {
    Map<String, String> a = BenchStack.args(args);
    BenchStack stack = BenchStack.from(a);
    String tag = a.getOrDefault("tag", "run");
    int seconds = Integer.parseInt(a.getOrDefault("seconds", "60"));
    SlurmClient slurm = stack.slurm();
    CpuMeter cpu = CpuMeter.of(stack);
    List<Long> held = new ArrayList<>();
    try {
      for (String k : a.getOrDefault("jobs", "20,1000,5000").split(",")) {
        int jobs = Integer.parseInt(k.trim());
        while (held.size() < jobs) {
          held.addAll(submitHeld(stack, Math.min(500, jobs - held.size())));
        }
        measure(stack, slurm, cpu, held, seconds, tag + "-k" + jobs);
      }
    } finally {
      stack.scancel(held);
    }
  }

  /** {@code n} held jobs of root (not the extender's Slurm user), four sbatch at a time. */
  static List<Long> submitHeld(BenchStack stack, int n) throws Exception {
    List<Long> ids = java.util.Collections.synchronizedList(new ArrayList<>());
    var pool = Executors.newFixedThreadPool(4);
    Map<String, String> env = Map.of("SLURM_CONF", stack.env("SLURM_CONF"));
    for (int i = 0; i < n; i++) {
      pool.execute(
          () ->
              ids.add(
                  Long.parseLong(
                      BenchStack.exec(
                              List.of(
                                  slurmCommand(stack, "sbatch"),
                                  "--parsable",
                                  "--hold",
                                  "-p",
                                  "training",
                                  "-J",
                                  "other-user",
                                  "-o",
                                  "/dev/null",
                                  "-D",
                                  stack.env("KSE_LAB_JOB_DIR"),
                                  "--wrap",
                                  "sleep 60"),
                              env)
                          .trim()
                          .split(";")[0])));
    }
    pool.shutdown();
    pool.awaitTermination(10, TimeUnit.MINUTES);
    return ids;
  }

  static String slurmCommand(BenchStack stack, String name) {
    return stack.slurmCommand(name);
  }

  static void measure(
      BenchStack stack, SlurmClient slurm, CpuMeter cpu, List<Long> held, int seconds, String tag)
      throws Exception {
    Map<String, String> env = Map.of("SLURM_CONF", stack.env("SLURM_CONF"));
    // a busy cluster: something changes all the time (here one job's comment, every 200 ms)
    ScheduledExecutorService toucher = Executors.newSingleThreadScheduledExecutor();
    AtomicLong touches = new AtomicLong();
    long touched = held.get(0);
    toucher.scheduleAtFixedRate(
        () -> {
          try {
            BenchStack.exec(
                List.of(
                    slurmCommand(stack, "scontrol"),
                    "update",
                    "jobid=" + touched,
                    "comment=touch-" + touches.incrementAndGet()),
                env);
          } catch (RuntimeException e) {
            // one missed touch changes nothing measured
          }
        },
        0,
        200,
        TimeUnit.MILLISECONDS);
    try {
      Thread.sleep(5_000); // the extender's polls settle into the new size
      long listingBytes = listingBytes(stack);
      Map<String, Double> callsBefore = ScaleLoad.extenderCounters(stack);
      Map<String, Long> cpuBefore = cpu.snapshot();
      Map<String, Long> rpcBefore = sdiagUser(stack, stack.env("KSE_LAB_JWT_USER"));
      Thread.sleep(seconds * 1000L);
      Map<String, Long> rpcAfter = sdiagUser(stack, stack.env("KSE_LAB_JWT_USER"));
      Map<String, Long> spent = CpuMeter.spent(cpuBefore, cpu.snapshot());
      Map<String, Double> calls = delta(callsBefore, ScaleLoad.extenderCounters(stack));
      double perMinute = 60.0 / seconds;
      StringBuilder out = new StringBuilder();
      out.append("slurm_load tag=").append(tag).append(" other_jobs=").append(held.size());
      out.append(" get_jobs_bytes=").append(listingBytes);
      out.append(
          String.format(
              " slurmrestd_cpu_s_per_min=%.2f slurmctld_cpu_s_per_min=%.2f",
              spent.getOrDefault("slurmrestd", 0L) / 1000.0 * perMinute,
              spent.getOrDefault("slurmctld", 0L) / 1000.0 * perMinute));
      for (Map.Entry<String, Double> e : new TreeMap<>(calls).entrySet()) {
        out.append(String.format(" %s=%.1f", e.getKey(), e.getValue() * perMinute));
      }
      out.append(
          String.format(
              " our_rpcs_per_min=%.0f our_rpc_ms_per_min=%.0f",
              (rpcAfter.getOrDefault("count", 0L) - rpcBefore.getOrDefault("count", 0L))
                  * perMinute,
              (rpcAfter.getOrDefault("us", 0L) - rpcBefore.getOrDefault("us", 0L))
                  / 1000.0
                  * perMinute));
      System.out.println(out);
    } finally {
      toucher.shutdownNow();
    }
  }

  /** The bytes of one {@code GET jobs} (what a changed poll reads). */
  static long listingBytes(BenchStack stack) throws Exception {
    String version = stack.slurm().apiVersion().id();
    String slash = version.equals("v0.0.38") ? "" : "/";
    HttpRequest req =
        HttpRequest.newBuilder(
                URI.create(stack.env("KSE_LAB_REST_URL") + "/slurm/" + version + "/jobs" + slash))
            .header("X-SLURM-USER-NAME", stack.env("KSE_LAB_JWT_USER"))
            .header(
                "X-SLURM-USER-TOKEN",
                Files.readString(Path.of(stack.env("KSE_LAB_JWT_FILE"))).trim())
            .build();
    // HTTP/1.1 as the bridge speaks it (the default client's h2c upgrade confuses slurmrestd)
    return HttpClient.newBuilder()
        .version(HttpClient.Version.HTTP_1_1)
        .build()
        .send(req, HttpResponse.BodyHandlers.ofByteArray())
        .body()
        .length;
  }

  private static final Pattern CALLS =
      Pattern.compile(
          "^kse_slurm_request_duration_seconds_(count|sum)\\{([^}]*)\\} ([0-9.eE+-]+)$");

  /**
   * The extender's Slurm calls so far, from its metrics: {@code calls_<operation>} (count) and
   * {@code call_s_<operation>} (seconds), over every API version and outcome.
   */
  static Map<String, Double> slurmCalls(BenchStack stack) throws Exception {
    return slurmCalls(extenderMetrics(stack));
  }

  /** The stack's extender's {@code /metrics}, as Prometheus text. */
  static String extenderMetrics(BenchStack stack) throws Exception {
    return HttpClient.newHttpClient()
        .send(
            HttpRequest.newBuilder(URI.create(stack.env("KSE_E2E_EXTENDER_URL") + "/metrics"))
                .build(),
            HttpResponse.BodyHandlers.ofString())
        .body();
  }

  static Map<String, Double> slurmCalls(String metrics) {
    Map<String, Double> out = new TreeMap<>();
    for (String line : metrics.split("\n")) {
      Matcher m = CALLS.matcher(line);
      if (m.matches()) {
        Matcher op = Pattern.compile("operation=\"([^\"]+)\"").matcher(m.group(2));
        if (op.find()) {
          String key = (m.group(1).equals("count") ? "calls_" : "call_s_") + op.group(1);
          out.merge(key, Double.parseDouble(m.group(3)), Double::sum);
        }
      }
    }
    return out;
  }

  static Map<String, Double> delta(Map<String, Double> before, Map<String, Double> after) {
    Map<String, Double> d = new TreeMap<>();
    after.forEach((k, v) -> d.put(k, v - before.getOrDefault(k, 0.0)));
    return d;
  }

  private static final Pattern SDIAG_USER =
      Pattern.compile(
          "^\\s*(\\S+)\\s*\\(\\s*\\d+\\)\\s+count:(\\d+)\\s+ave_time:\\d+\\s+total_time:(\\d+)");

  /** slurmctld's RPC count and total time (µs) for one user, from {@code sdiag}. */
  static Map<String, Long> sdiagUser(BenchStack stack, String user) {
    return sdiagUsers(stack).getOrDefault(user, Map.of());
  }

  /** slurmctld's RPC count and total time (µs) by user, from {@code sdiag}. */
  static Map<String, Map<String, Long>> sdiagUsers(BenchStack stack) {
    String out =
        BenchStack.exec(
            List.of(slurmCommand(stack, "sdiag")), Map.of("SLURM_CONF", stack.env("SLURM_CONF")));
    Map<String, Map<String, Long>> users = new TreeMap<>();
    boolean byUser = false;
    for (String line : out.split("\n")) {
      if (line.contains("Remote Procedure Call statistics by user")) {
        byUser = true;
        continue;
      }
      if (byUser) {
        Matcher m = SDIAG_USER.matcher(line);
        if (m.find()) {
          users.put(
              m.group(1),
              Map.of("count", Long.parseLong(m.group(2)), "us", Long.parseLong(m.group(3))));
        }
      }
    }
    return users;
  }
}
