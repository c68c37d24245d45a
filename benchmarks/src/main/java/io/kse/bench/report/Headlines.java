package io.kse.bench.report;

/**
 * The headline table of RESULTS.md: each figure that has a target, or that users ask about first.
 */
final class Headlines {
  private final Raw r;
  private final StringBuilder md;

  Headlines(Raw r, StringBuilder md) {
    this.r = r;
    this.md = md;
  }

  private String v(String key) {
    return r.v(key);
  }

  /** The extender's RSS at the end of a scale window / its highest, and its live heap. */
  private void rssRow(String figure, java.util.function.UnaryOperator<String> scale) {
    row(
        figure,
        scale.apply("extender_rss_mib")
            + " / "
            + scale.apply("extender_rss_max_mib")
            + " MiB (live heap "
            + scale.apply("extender_heap_live_mib")
            + " MiB)",
        "< 300 MiB");
  }

  private void row(String figure, String value, String target) {
    md.append("| ").append(figure).append(" | ").append(value).append(" | ").append(target);
    md.append(" |\n");
  }

  void write() {
    md.append("## Headlines\n\n| figure | value | target |\n| --- | --- | --- |\n");
    row("filter path p99, in-process, 5,000 names (JMH)", r.jmhP99At5000() + " µs", "< 1,000 µs");
    row(
        "filter over loopback HTTP, 5,000 names, 1 client (kube-scheduler calls filter one pod at a"
            + " time), p99",
        v("service.c1.p99_ms") + " ms (16 clients: " + v("service.c16.p99_ms") + " ms)",
        "< 5 ms");
    row(
        "extender RSS tracking 10,000 pods and 5,000 nodes",
        v("memory.rss_mib") + " MiB (live heap " + v("memory.heap_used_mib") + " MiB)",
        "< 300 MiB");
    row(
        "time-to-bind, 200 pods on free capacity, 32 nodes: p50 / p99",
        v("n32.ttb_p50_ms") + " / " + v("n32.ttb_p99_ms") + " ms",
        "—");
    row(
        "same, as a ratio to (Slurm floor p50 + Kubernetes floor p50)",
        v("n32.ttb_ratio_to_floors")
            + "× ("
            + v("n32.slurm_floor_p50_ms")
            + " + "
            + v("n32.kube_floor_p50_ms")
            + " ms)",
        "≤ 1.2×");
    row(
        "same t0 (each burst's start) for all three runs: ours / (Slurm floor + Kubernetes floor),"
            + " p50 from start and makespan",
        "p50 "
            + v("n32.ttb_from_start_ratio")
            + "×, makespan "
            + v("n32.ttb_makespan_ratio")
            + "× ("
            + v("n32.ttb_makespan_ms")
            + " ms vs "
            + v("n32.slurm_floor_makespan_ms")
            + " + "
            + v("n32.kube_floor_makespan_ms")
            + " ms)",
        "≤ 1.2×");
    row(
        "our own part (placeholder seen RUNNING → pod bound), p50: one pod on free capacity / in a"
            + " 64-pod burst, with Slurm's allocation hint",
        v("n32.our_part_p50_ms_single")
            + " ms / "
            + v("n32.our_part_p50_ms_burst64")
            + " ms (without the hint: "
            + v("n32.our_part_p50_ms_single_no_hint")
            + " / "
            + v("n32.our_part_p50_ms_burst64_no_hint")
            + " ms)",
        "≤ 100 / ≤ 300 ms");
    row(
        "CPU per bound pod, 200-pod burst: the extender / everything in our run / both floors"
            + " together",
        v("n32.cpu_ms_per_pod_extender")
            + " / "
            + v("n32.cpu_ms_per_pod_total_ours")
            + " / "
            + v("n32.cpu_ms_per_pod_total_floors")
            + " ms",
        "—");
    row(
        "the extender's CPU per bound pod, fresh JVM (16 pods first) / warm (after "
            + v("n32.warm_up_pods")
            + " more pods), of which JIT",
        v("n32.cpu_ms_per_pod_extender")
            + " ("
            + v("n32.cpu_ms_per_pod.ours.extender.jit")
            + ") / "
            + v("n32.cpu_ms_per_pod_extender_warm")
            + " ("
            + v("n32.cpu_ms_per_pod.ours_warm.extender.jit")
            + ") ms",
        "warm ≤ 10 ms");
    String floorsFromStart =
        Fmt.sum(v("n32.slurm_floor_from_start_p50_ms"), v("n32.kube_floor_from_start_p50_ms"));
    String floorsMakespan =
        Fmt.sum(v("n32.slurm_floor_makespan_ms"), v("n32.kube_floor_makespan_ms"));
    row(
        "same t0, warm extender (after "
            + v("n32.warm_up_pods")
            + " more pods): p50 from start and makespan, to the same floors",
        "p50 "
            + Fmt.ratio(v("n32.ttb_warm_from_start_p50_ms"), floorsFromStart)
            + "×, makespan "
            + Fmt.ratio(v("n32.ttb_warm_makespan_ms"), floorsMakespan)
            + "× ("
            + v("n32.ttb_warm_makespan_ms")
            + " ms)",
        "≤ 1.2×");
    row("pods bound per second in that burst", v("n32.pods_per_s"), "≥ 200");
    row(
        "API writes per bound pod, ours / the default scheduler's",
        v("n32.api_writes_per_pod_ours") + " / " + v("n32.api_writes_per_pod_kube_floor"),
        "—");
    row(
        "slurmrestd submits/s, 1 / 8 / 16 callers (idle stack)",
        v("n32.submit_c1_per_s")
            + " / "
            + v("n32.submit_c8_per_s")
            + " / "
            + v("n32.submit_c16_per_s"),
        "—");
    for (String[] n : new String[][] {{"5,000", "k5000", "GPU nodes"}, {"10,000", "n10000", ""}}) {
      String at = v(n[1] + ".our_part_p50_ms_burst64");
      String at32 = v("n32.our_part_p50_ms_burst64");
      row(
          n[1].equals("k5000")
              ? "wake-up → bound at 5,000 GPU nodes vs 32, 64-pod burst p50"
              : "wake-up → bound at 10,000 GPU nodes (scale rig) vs 32, 64-pod burst p50",
          at + " vs " + at32 + " ms (" + Fmt.ratio(at, at32) + "×)",
          "≤ 1.2×");
    }
    row(
        "our share of slurmctld's RPC time, 10,000 nodes, 50,000 other users' jobs (steady state, 5"
            + " min)",
        r.scale(50000, "our_rpc_time_share_pct")
            + " % ("
            + r.scale(50000, "our_rpc_ms_per_min")
            + " ms a minute)",
        "≤ 2 %");
    row(
        "bytes we read from slurmrestd a minute, 20,000 / 50,000 other users' jobs",
        Fmt.mb(r.scale(20000, "bytes_read"), 2)
            + " / "
            + Fmt.mb(r.scale(50000, "bytes_read"), 2)
            + " MB",
        "flat (±20 %)");
    rssRow(
        "extender RSS in steady state at 10,000 nodes, 50,000 jobs: end of window / highest",
        key -> r.scale(50000, key));
    if (!r.scaleCheck(50000, "extender_rss_mib").isEmpty()) {
      rssRow(
          "same, with the Deployment's JVM flags (`benchmarks/run scale-check`, "
              + r.date("scale-check").orElse("")
              + "): end of window / highest",
          key -> r.scaleCheck(50000, key));
    }
    if (!r.scaleCheck(50000, "extender_rss_start_max_mib").isEmpty()) {
      row(
          "same, highest from the restarted extender's start to its takeover's end (its listings"
              + " and informers' first lists; took over after "
              + r.scaleCheck(50000, "took_over_s")
              + " s)",
          r.scaleCheck(50000, "extender_rss_start_max_mib") + " MiB",
          "< 300 MiB");
    }
    row(
        "time-to-bind when each pod needs a Slurm preemption (16 × 8 GPUs), p50",
        v("n32.preemption_ttb_p50_ms")
            + " ms: Slurm "
            + v("n32.preemption_slurm_part_p50_ms")
            + " ms + ours "
            + v("n32.preemption_our_part_p50_ms")
            + " ms",
        "—");
    row(
        "multi-node group (kse.io/group, 8 GPUs per member), creation → every member bound, p50 (5"
            + " groups each, one at a time)",
        "size 2: "
            + v("n32.group_ttb_p50_ms_size2")
            + " ms, size 8: "
            + v("n32.group_ttb_p50_ms_size8")
            + " ms; single pod in the same run: "
            + v("n32.ttb_p50_ms")
            + " ms",
        "—");
    row(
        "TPU slice (kse.io/group of google.com/tpu 4 per host, Slurm 26.05 topology/block, blocks of"
            + " 4/4/8 hosts), creation → every member bound, p50 (5 each, one at a time;"
            + " docs/tpu.md)",
        "one 2x2x4 slice (4 hosts): "
            + v("tpu.tpu_slice_ttb_p50_ms_2x2x4")
            + " ms ("
            + v("tpu.tpu_slice_ttb_done_2x2x4")
            + "), multislice of 2 × 2x2x4 (8 hosts): "
            + v("tpu.tpu_multislice_ttb_p50_ms_2x2x4x2")
            + " ms ("
            + v("tpu.tpu_multislice_ttb_done_2x2x4x2")
            + ")",
        "—");
    row(
        "shared GPU (a quarter: 1 of 4 Slurm shards through a DRA share, Slurm 26.05: 22.05"
            + " mixes shards and whole GPUs and the extender refuses part of one there;"
            + " docs/gpu-sharing.md), creation → bound, p50 (5, one at a time) / GPUs held by 8"
            + " replicas created at once",
        v("shared.shared_ttb_p50_ms")
            + " ms ("
            + v("shared.shared_ttb_done")
            + ") / "
            + v("shared.shared_gpus_held_by_8")
            + " GPUs for "
            + v("shared.shared_replicas_bound_of_8")
            + " bound replicas: "
            + v("shared.shared_gpus_per_replica")
            + " GPU per replica (a whole-GPU replica: 1)",
        "—");
  }
}
