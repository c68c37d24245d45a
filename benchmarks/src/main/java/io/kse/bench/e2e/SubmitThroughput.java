package io.kse.bench.e2e;

import io.kse.slurm.JobSubmission;
import io.kse.slurm.SlurmClient;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * What slurmrestd takes: placeholder-shaped job submissions per second from 1 to 16 concurrent
 * callers, each with its own kept-alive connection (the bridge's HTTP client, as the extender uses
 * it), on the stack's idle Slurm. The jobs are held (they never start), so the figure is the
 * submission path alone — REST, JSON, authentication, slurmctld's job write lock — and the CPU
 * slurmrestd and slurmctld spend per submission. The extender must be stopped (it would cancel the
 * tagged jobs as orphans).
 *
 * <pre>
 * java -cp benchmarks.jar io.kse.bench.e2e.SubmitThroughput --env DIR/env --stack e2e/cluster/stack
 *      [--jobs 200] [--callers 1,2,4,8,16] [--tag T]
 * </pre>
 */
public final class SubmitThroughput {
  private SubmitThroughput() {}

  public static void main(String[] args) throws Exception {
    Map<String, String> a = BenchStack.args(args);
    BenchStack stack = BenchStack.from(a);
    String tag = a.getOrDefault("tag", "run");
    int jobs = Integer.parseInt(a.getOrDefault("jobs", "200"));
    SlurmClient slurm = stack.slurm();
    CpuMeter cpu = CpuMeter.of(stack);
    stack.command("extender-stop");
    try {
      submit(slurm, stack, 16, 1); // a warm JVM and connections before anything is measured
      for (String c : a.getOrDefault("callers", "1,2,4,8,16").split(",")) {
        int callers = Integer.parseInt(c.trim());
        Map<String, Long> before = cpu.snapshot();
        long t0 = System.nanoTime();
        List<Long> latencies = submit(slurm, stack, jobs, callers);
        double seconds = (System.nanoTime() - t0) / 1e9;
        Map<String, Long> spent = CpuMeter.spent(before, cpu.snapshot());
        Collections.sort(latencies);
        String k = tag + ".submit_c" + callers;
        System.out.printf("%s_per_s=%.1f%n", k, jobs / seconds);
        System.out.printf("%s_p50_ms=%.1f%n", k, latencies.get(latencies.size() / 2) / 1e6);
        System.out.printf(
            "%s_p99_ms=%.1f%n", k, latencies.get((int) (latencies.size() * 0.99)) / 1e6);
        for (String component : List.of("slurmctld", "slurmrestd")) {
          System.out.printf(
              "%s_cpu_ms_per_job.%s=%.2f%n",
              k, component, spent.getOrDefault(component, 0L) / (double) jobs);
        }
      }
    } finally {
      stack.command("extender-start");
    }
    System.exit(0); // the Slurm client's threads are not daemons
  }

  /** {@code n} held jobs from {@code callers} threads; each call's latency; then all cancelled. */
  private static List<Long> submit(SlurmClient slurm, BenchStack stack, int n, int callers)
      throws Exception {
    List<Long> latencies = Collections.synchronizedList(new ArrayList<>());
    List<Long> ids = Collections.synchronizedList(new ArrayList<>());
    ExecutorService pool = Executors.newFixedThreadPool(callers);
    for (int i = 0; i < n; i++) {
      int k = i;
      pool.execute(
          () -> {
            JobSubmission s =
                stack.placeholderJob("bench-submit", "job-" + k, 1).hold(true).build();
            long t = System.nanoTime();
            ids.add(slurm.submit(s));
            latencies.add(System.nanoTime() - t);
          });
    }
    pool.shutdown();
    pool.awaitTermination(10, TimeUnit.MINUTES);
    if (ids.size() != n) {
      throw new IllegalStateException(ids.size() + " of " + n + " submissions succeeded");
    }
    stack.scancel(ids);
    Thread.sleep(1000);
    return latencies;
  }
}
