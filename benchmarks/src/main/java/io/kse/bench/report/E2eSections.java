package io.kse.bench.report;

import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;

/**
 * The end-to-end tier's detail for the 32-node run: every run from the same t0, CPU per bound pod
 * by process, API writes and Slurm calls per pod, slurmrestd's submit rate, the 5,000-node wake-up.
 */
final class E2eSections {
  /** The 32-node run before issue 30's CPU work, whose raw lines are kept beside the others. */
  private static final String BEFORE_DATE = "2026-11-27T05:12Z";

  private final Raw r;
  private final StringBuilder md;

  E2eSections(Raw r, StringBuilder md) {
    this.r = r;
    this.md = md;
  }

  private void line(String s) {
    md.append(s).append('\n');
  }

  private String v(String key) {
    return r.v(key);
  }

  void cost() {
    line("### Same t0, and what each bound pod costs (32 nodes, 200 pods)");
    line("");
    line(
        "All three runs timed from their burst's start (the first create or submit call). The Slurm"
            + " floor now");
    line(
        "looks at Slurm as our cache does: jobs changed since its last look, every 500 ms (before:"
            + " the full job");
    line("list every 50 ms, each job's clock from its own submit call).");
    line("");
    line(
        "| run | per item p50 / p99 ms | from the burst's start p50 / p99 ms | makespan ms | CPU ms"
            + " per pod, all processes |");
    line("| --- | --- | --- | --- | --- |");
    String[][] runs = {
      {"slurm_floor", "Slurm alone", "slurm_floor"},
      {"kube_floor", "Kubernetes alone", "kube_floor"},
      {"ttb", "ours", "ours"},
      {"ttb_warm", "ours, warm", "ours_warm"}
    };
    for (String[] run : runs) {
      String k = "n32." + run[0];
      line(
          "| "
              + run[1]
              + " | "
              + v(k + "_p50_ms")
              + " / "
              + v(k + "_p99_ms")
              + " | "
              + v(k + "_from_start_p50_ms")
              + " / "
              + v(k + "_from_start_p99_ms")
              + " | "
              + v(k + "_makespan_ms")
              + " | "
              + v("n32.cpu_ms_per_pod_total_" + run[2])
              + " |");
    }
    line("");
    line(
        "CPU ms per bound pod (running job for the Slurm floor), per process, from /proc (user +"
            + " system, and");
    line("reaped children: slurmd's job steps), burst start → last bound:");
    line("");
    line(
        "| process | ours, before issue 30's CPU work ("
            + BEFORE_DATE
            + ") | ours | ours, warm (after "
            + v("n32.warm_up_pods")
            + " more pods) | Slurm floor | Kubernetes floor |");
    line("| --- | --- | --- | --- | --- | --- |");
    List<String> components = new ArrayList<>(processes());
    components.add("extender.jit");
    for (String c : components) {
      line(
          "| "
              + c
              + " | "
              + r.before("n32.cpu_ms_per_pod.ours." + c)
              + " | "
              + v("n32.cpu_ms_per_pod.ours." + c)
              + " | "
              + v("n32.cpu_ms_per_pod.ours_warm." + c)
              + " | "
              + v("n32.cpu_ms_per_pod.slurm_floor." + c)
              + " | "
              + v("n32.cpu_ms_per_pod.kube_floor." + c)
              + " |");
    }
    line(
        "| all processes | "
            + r.before("n32.cpu_ms_per_pod_total_ours")
            + " | "
            + v("n32.cpu_ms_per_pod_total_ours")
            + " | "
            + v("n32.cpu_ms_per_pod_total_ours_warm")
            + " | "
            + v("n32.cpu_ms_per_pod_total_slurm_floor")
            + " | "
            + v("n32.cpu_ms_per_pod_total_kube_floor")
            + " |");
    line("");
    line("\"Before\" is the 32-node run of " + BEFORE_DATE + " (commit 33ccbaa, raw lines kept in");
    line(
        "`benchmarks/raw/e2e-before-issue30-cpu.lines`); \"warm\" is the same burst once the"
            + " extender has bound");
    line(
        v("n32.warm_up_pods")
            + " more pods in bursts of 200, as a long-running extender has: its JIT compilers still");
    line(
        "take "
            + v("n32.cpu_ms_per_pod.ours_warm.extender.jit")
            + " ms of its "
            + v("n32.cpu_ms_per_pod.ours_warm.extender")
            + " ms (a method called once per pod reaches the optimizing");
    line(
        "compiler's threshold only after thousands of pods). API writes per pod, warm: "
            + v("n32.api_writes_per_pod_ours_warm")
            + ".");
    line("");
    line(
        "What the table says: on 2 shared cores our run costs about "
            + v("n32.cpu_ms_per_pod_total_ours")
            + " CPU-ms per pod against");
    line(
        v("n32.cpu_ms_per_pod_total_floors")
            + " for the two floors together, and the difference sits in two places — the extender");
    line(
        "itself ("
            + v("n32.cpu_ms_per_pod.ours.extender")
            + " ms: submissions, wake-up patches, Events, filter and bind over HTTP, its");
    line(
        "Slurm polls — of which its JIT compilers "
            + v("n32.cpu_ms_per_pod.ours.extender.jit")
            + " ms and its GC "
            + v("n32.cpu_ms_per_pod.ours.extender.gc")
            + " ms: a JVM a few");
    line(
        "hundred pods old is still compiling, a cost a long-running extender pays once) and the API"
            + " server");
    line(
        "("
            + v("n32.cpu_ms_per_pod.ours.kube-apiserver")
            + " ms against "
            + v("n32.cpu_ms_per_pod.kube_floor.kube-apiserver")
            + " ms");
    line(
        "when the default scheduler binds alone: our writes per pod, below). slurmrestd renders the"
            + " whole job");
    line(
        "table for each of our polls while anything changes ("
            + v("n32.cpu_ms_per_pod.ours.slurmrestd")
            + " ms). That is where the makespan ratio ("
            + v("n32.ttb_makespan_ratio")
            + "× the two floors back to back)");
    line(
        "has to be won; the allocation hint cuts one pod's wait ("
            + v("n32.our_part_p50_ms_single_no_hint")
            + " → "
            + v("n32.our_part_p50_ms_single")
            + " ms");
    line(
        "p50) but not a burst's ("
            + v("n32.our_part_p50_ms_burst64_no_hint")
            + " → "
            + v("n32.our_part_p50_ms_burst64")
            + " ms), which queues");
    line(
        "behind that CPU. The extender ran 16 unmeasured pods first (a fresh JVM compiles its hot"
            + " paths");
    line("during its first pods; the floors' processes were long warm).");
    line("");
    writes();
  }

  /** The processes the e2e tier measured, by name. */
  private TreeSet<String> processes() {
    TreeSet<String> out = new TreeSet<>();
    for (String l : r.lines("e2e.txt")) {
      if (l.startsWith("n32.cpu_ms_per_pod.")) {
        String[] k = l.substring(0, l.indexOf('=')).split("\\.");
        if (k.length >= 4 && k[3].matches("[a-z-]+")) {
          out.add(k[3]);
        }
      }
    }
    return out;
  }

  private void writes() {
    line(
        "API writes per bound pod, from kube-apiserver's own `apiserver_request_total` (every client"
            + " counted,");
    line(
        "the leases of kwok and the schedulers included): ours "
            + v("n32.api_writes_per_pod_ours")
            + ", Kubernetes alone");
    line(v("n32.api_writes_per_pod_kube_floor") + ".");
    line("");
    line("| write | ours | Kubernetes floor |");
    line("| --- | --- | --- |");
    TreeSet<String> writes = new TreeSet<>();
    for (String l : r.lines("e2e.txt")) {
      java.util.regex.Matcher m =
          java.util.regex.Pattern.compile(
                  "^n32\\.api_per_pod\\.(ours|kube_floor)\\.([A-Z]*_[a-z/]*)")
              .matcher(l);
      if (m.find()) {
        writes.add(m.group(2));
      }
    }
    for (String w : writes) {
      line(
          "| "
              + w.replaceFirst("_", " ")
              + " | "
              + v("n32.api_per_pod.ours." + w)
              + " | "
              + v("n32.api_per_pod.kube_floor." + w)
              + " |");
    }
    line("");
    List<String> calls = new ArrayList<>();
    for (String l : r.lines("e2e.txt")) {
      if (l.startsWith("n32.slurm_calls_per_pod.")) {
        calls.add(l.substring("n32.slurm_calls_per_pod.".length()).replaceFirst("=", " "));
      }
    }
    line(
        "The extender's Slurm calls per bound pod (retries included): "
            + String.join(", ", calls)
            + "; its submit");
    line("calls took " + v("n32.our_submit_mean_ms") + " ms on average during the burst.");
    line("");
    line(
        "slurmrestd alone on the idle 32-node stack (`SubmitThroughput`: 200 held"
            + " placeholder-shaped jobs per");
    line("row, each caller with its own kept-alive connection, the bridge's client):");
    line("");
    line(
        "| callers | submits/s | p50 ms | p99 ms | slurmctld CPU ms/job | slurmrestd CPU ms/job |");
    line("| --- | --- | --- | --- | --- | --- |");
    for (int c : new int[] {1, 2, 4, 8, 16}) {
      String k = "n32.submit_c" + c;
      line(
          "| "
              + c
              + " | "
              + v(k + "_per_s")
              + " | "
              + v(k + "_p50_ms")
              + " | "
              + v(k + "_p99_ms")
              + " | "
              + v(k + "_cpu_ms_per_job.slurmctld")
              + " | "
              + v(k + "_cpu_ms_per_job.slurmrestd")
              + " |");
    }
    line("");
    line("#### Wake-up → bound at 5,000 GPU nodes");
    line("");
    line(
        "The same measure as \"our own part\" above (placeholder seen RUNNING → pod bound, with the"
            + " hint) on a stack");
    line(
        "of 32 Slurm nodes plus 4,968 GPU nodes only Kubernetes has ("
            + v("k5000.nodes_in_kubernetes")
            + " nodes in all,");
    line(
        "`stack start --k8s-only-gpu-nodes`): kube-scheduler would filter every one of them, and"
            + " send every name");
    line(
        "to our filter, for each woken pod; the wake-up nominates Slurm's node, and kube-scheduler"
            + " tries a");
    line("nominated node alone first.");
    line("");
    line("| nodes | one pod p50 / p95 ms | 64-pod burst p50 / p95 ms |");
    line("| --- | --- | --- |");
    for (String[] n : new String[][] {{"32", "n32"}, {"5,000", "k5000"}}) {
      line(
          "| "
              + n[0]
              + " | "
              + v(n[1] + ".our_part_p50_ms_single")
              + " / "
              + v(n[1] + ".our_part_p95_ms_single")
              + " | "
              + v(n[1] + ".our_part_p50_ms_burst64")
              + " / "
              + v(n[1] + ".our_part_p95_ms_burst64")
              + " |");
    }
    line("");
    line(
        "Ratio 5,000 : 32 nodes, burst p50: "
            + Fmt.ratio(v("k5000.our_part_p50_ms_burst64"), v("n32.our_part_p50_ms_burst64"))
            + "×; one pod p50: "
            + Fmt.ratio(v("k5000.our_part_p50_ms_single"), v("n32.our_part_p50_ms_single"))
            + "× (target ≤ 1.2×).");
    line("");
  }
}
