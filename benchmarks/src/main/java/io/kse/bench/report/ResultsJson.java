package io.kse.bench.report;

import java.util.LinkedHashMap;
import java.util.Map;

/** {@code benchmarks/results.json}: the headline figures by name, for tools. */
final class ResultsJson {
  private ResultsJson() {}

  static String of(Raw r, String date, String machine) {
    Map<String, String> f = new LinkedHashMap<>();
    f.put("filter_p99_us_5000_names", r.jmhP99At5000());
    f.put("http_filter_p99_ms_5000_names", r.v("service.c1.p99_ms"));
    n32(
        f,
        r,
        "ttb_p50_ms",
        "ttb_p99_ms",
        "ttb_ratio_to_floors",
        "slurm_floor_p50_ms",
        "kube_floor_p50_ms",
        "pods_per_s",
        "preemption_ttb_p50_ms",
        "group_ttb_p50_ms_size2",
        "group_ttb_p50_ms_size8");
    f.put("tpu_slice_ttb_p50_ms_2x2x4", r.v("tpu.tpu_slice_ttb_p50_ms_2x2x4"));
    f.put("tpu_multislice_ttb_p50_ms_2x2x4x2", r.v("tpu.tpu_multislice_ttb_p50_ms_2x2x4x2"));
    f.put("shared_gpu_ttb_p50_ms", r.v("shared.shared_ttb_p50_ms"));
    f.put("shared_gpus_per_replica", r.v("shared.shared_gpus_per_replica"));
    f.put("rss_mib_10k_pods_5k_nodes", r.v("memory.rss_mib"));
    n32(
        f,
        r,
        "ttb_from_start_ratio",
        "ttb_makespan_ratio",
        "our_part_p50_ms_single",
        "our_part_p50_ms_burst64",
        "cpu_ms_per_pod_extender");
    f.put("cpu_ms_per_pod_extender_jit", r.v("n32.cpu_ms_per_pod.ours.extender.jit"));
    f.put("warm_up_pods", r.v("n32.warm_up_pods"));
    f.put("cpu_ms_per_pod_extender_warm", r.v("n32.cpu_ms_per_pod_extender_warm"));
    f.put("cpu_ms_per_pod_extender_jit_warm", r.v("n32.cpu_ms_per_pod.ours_warm.extender.jit"));
    n32(
        f,
        r,
        "cpu_ms_per_pod_total_ours_warm",
        "api_writes_per_pod_ours_warm",
        "ttb_warm_p50_ms",
        "ttb_warm_makespan_ms");
    f.put(
        "ttb_warm_makespan_ratio",
        Fmt.ratio(
            r.v("n32.ttb_warm_makespan_ms"),
            Fmt.sum(r.v("n32.slurm_floor_makespan_ms"), r.v("n32.kube_floor_makespan_ms"))));
    f.put("slurm_get_job_per_pod", r.v("n32.slurm_calls_per_pod.get_job"));
    n32(
        f,
        r,
        "cpu_ms_per_pod_total_ours",
        "cpu_ms_per_pod_total_floors",
        "api_writes_per_pod_ours",
        "api_writes_per_pod_kube_floor");
    for (int c : new int[] {1, 8, 16}) {
      f.put("slurmrestd_submits_per_s_c" + c, r.v("n32.submit_c" + c + "_per_s"));
    }
    f.put("our_part_p50_ms_single_5000_nodes", r.v("k5000.our_part_p50_ms_single"));
    f.put("our_part_p50_ms_burst64_5000_nodes", r.v("k5000.our_part_p50_ms_burst64"));
    f.put(
        "wake_to_bound_ratio_5000_to_32_nodes",
        Fmt.ratio(r.v("k5000.our_part_p50_ms_burst64"), r.v("n32.our_part_p50_ms_burst64")));
    f.put("our_part_p50_ms_burst64_10000_nodes", r.v("n10000.our_part_p50_ms_burst64"));
    f.put(
        "wake_to_bound_ratio_10000_to_32_nodes",
        Fmt.ratio(r.v("n10000.our_part_p50_ms_burst64"), r.v("n32.our_part_p50_ms_burst64")));
    f.put("scale_our_rpc_time_share_pct_50000_jobs", r.scale(50000, "our_rpc_time_share_pct"));
    f.put("scale_our_rpc_ms_per_min_50000_jobs", r.scale(50000, "our_rpc_ms_per_min"));
    f.put("scale_bytes_read_per_min_20000_jobs", r.scale(20000, "bytes_read"));
    f.put("scale_bytes_read_per_min_50000_jobs", r.scale(50000, "bytes_read"));
    f.put("scale_extender_rss_mib_50000_jobs", r.scale(50000, "extender_rss_mib"));
    f.put("scale_extender_rss_max_mib_50000_jobs", r.scale(50000, "extender_rss_max_mib"));
    // the last scale-check: the same queue with the Deployment's JVM flags (issue 47)
    f.put("scale_check_extender_rss_mib_50000_jobs", r.scaleCheck(50000, "extender_rss_mib"));
    f.put(
        "scale_check_extender_rss_max_mib_50000_jobs", r.scaleCheck(50000, "extender_rss_max_mib"));
    f.put(
        "scale_check_extender_rss_start_max_mib_50000_jobs",
        r.scaleCheck(50000, "extender_rss_start_max_mib"));
    f.put("scale_check_took_over_s_50000_jobs", r.scaleCheck(50000, "took_over_s"));
    f.put("scale_drain_to_taint_ms_50000_jobs", r.scale(50000, "drain_to_taint_ms"));
    StringBuilder out = new StringBuilder("{\n");
    out.append("  \"date\": \"").append(date).append("\",\n");
    out.append("  \"machine\": \"").append(machine).append("\"");
    f.forEach((k, v) -> out.append(",\n  \"").append(k).append("\": ").append(Fmt.json(v)));
    return out.append("\n}\n").toString();
  }

  /** The 32-node e2e run's figures under their own names. */
  private static void n32(Map<String, String> f, Raw r, String... keys) {
    for (String k : keys) {
      f.put(k, r.v("n32." + k));
    }
  }
}
