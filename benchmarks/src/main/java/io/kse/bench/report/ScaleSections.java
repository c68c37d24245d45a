package io.kse.bench.report;

import java.util.List;
import java.util.Map;

/**
 * What the extender costs Slurm: idle as other users' jobs grow (issue 28's first table, before and
 * after the state path's redesign), and on the scale rig of 10,000 nodes and 50,000 jobs.
 */
final class ScaleSections {
  private final Raw r;
  private final StringBuilder md;

  ScaleSections(Raw r, StringBuilder md) {
    this.r = r;
    this.md = md;
  }

  private void line(String s) {
    md.append(s).append('\n');
  }

  void slurmLoad() {
    if (!r.has("slurm-load.txt") && !r.has("slurm-load-before.txt")) {
      return;
    }
    line("## What an idle extender costs Slurm (`benchmarks/run slurm-load`)");
    line("");
    line(
        "16 GPU nodes on Slurm 22.05, the extender running with no pods of its own, K held jobs of"
            + " another user,");
    line(
        "one of them touched every 200 ms (a busy cluster's pending reasons); per minute over a 60 s"
            + " window.");
    line(
        "`GET jobs` is one whole-table listing; slurmrestd's and slurmctld's CPU from /proc; the"
            + " extender's");
    line(
        "calls from its own `kse_slurm_request_duration_seconds` and bytes from"
            + " `kse_slurm_response_bytes_total`;");
    line("our RPCs from `sdiag` (its statistics by user).");
    line("");
    if (r.has("slurm-load-before.txt")) {
      line(
          "**Before** (the whole job table whenever anything changed, the node table, every 500 ms; "
              + r.date("slurm-load-before").orElse("")
              + "):");
      line("");
      slurmLoadTable("slurm-load-before.txt");
      line("");
    }
    if (r.has("slurm-load.txt")) {
      line(
          "**After** (our placeholders only, the node table every 30 s, the job table every 5 min; "
              + r.date("slurm-load").orElse("")
              + "):");
      line("");
      slurmLoadTable("slurm-load.txt");
      line("");
    }
  }

  private void slurmLoadTable(String file) {
    line(
        "| other users' jobs | one GET jobs | slurmrestd CPU s/min | slurmctld CPU s/min | job"
            + " listings /min | s in them /min | job state checks /min | single-job reads /min |"
            + " node listings /min | MB read /min | our RPCs /min | our RPC ms /min |");
    line("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
    for (Map<String, String> row : r.rows(file, "slurm_load")) {
      Cells c = new Cells(row, "0");
      double bytes = Fmt.number(c.get("bytes_read"));
      line(
          "| "
              + String.join(
                  " | ",
                  c.get("other_jobs"),
                  Fmt.mb(c.get("get_jobs_bytes"), 1) + " MB",
                  c.get("slurmrestd_cpu_s_per_min"),
                  c.get("slurmctld_cpu_s_per_min"),
                  c.get("calls_list_jobs"),
                  c.get("call_s_list_jobs"),
                  c.get("calls_job_states"),
                  c.get("calls_get_job"),
                  c.get("calls_list_nodes"),
                  bytes > 0 ? String.format("%.2f", bytes / 1e6) : "-",
                  c.get("our_rpcs_per_min"),
                  c.get("our_rpc_ms_per_min"))
              + " |");
    }
  }

  void scale() {
    if (!r.has("scale.txt")) {
      return;
    }
    line(
        "## At scale: 10,000 nodes, 50,000 queued jobs (`benchmarks/run scale`, "
            + r.date("scale").orElse("")
            + ")");
    line("");
    for (String l :
        List.of(
            "Slurm 26.05 with 8 slurmd nodes and 10,000 GPU nodes made `state=external` (no slurmd),"
                + " Kubernetes with",
            "the same 10,000 nodes (kwok, no heartbeat); other users' external jobs (1-64 nodes, 1,000"
                + " eligible and",
            "running where they fit, the rest held) with a churn of 5 cancelled and 5 submitted a"
                + " second. Per",
            "queue size, a 60 s window with the extender stopped, then one with it running (10 s after"
                + " its start-up",
            "and takeover listings: steady state, no pods of its own). slurmctld's RPC time from `sdiag`"
                + " for every",
            "user and for ours (`kse`); the extender's calls and bytes from its metrics; RSS from /proc"
                + " (sampled every",
            "5 s). Then a node drained with scontrol and resumed: seconds until the extender's taint is"
                + " on its",
            "Kubernetes node, and gone again.",
            "",
            "**With Slurm's node triggers** (the hook as a site installs it, `strigger` for down,"
                + " drained, draining,",
            "fail, up and resume), the node table every 5 min and a 5 min running window, so that one"
                + " listing of it",
            "falls in each (production's safety net for jobs: 5 min, stretched at 50,000 jobs):",
            "")) {
      line(l);
    }
    scaleTable("scale.txt");
    line("");
    if (r.has("scale-check.txt")) {
      line(
          "**Checked again** after a change to the state path (`benchmarks/run scale-check`: the same"
              + " rig and settings, one queue size, no wake-up runs; "
              + r.date("scale-check").orElse("")
              + "):");
      line("");
      scaleTable("scale-check.txt");
      line("");
    }
    if (r.has("scale-2026-11-26.lines")) {
      line(
          "**Before the node triggers** (the node table every 30 s, with DETAIL; 60 s windows; "
              + r.text("scale-2026-11-26.date").orElse("").strip()
              + "):");
      line("");
      scaleTable("scale-2026-11-26.lines");
      line("");
    }
    if (r.has("scale-before-issue28.txt")) {
      line(
          "**Before issue 28** (commit 21d5852: the whole job table whenever anything changed and the"
              + " node table,");
      line(
          "every 500 ms; the same rig and harness, "
              + r.date("scale-before-issue28").orElse("")
              + "):");
      line("");
      scaleTable("scale-before-issue28.txt");
      line("");
    }
    if (r.has("scale-bind.txt")) {
      wakeUpAtScale();
    }
    r.text("scale-notes.md").ifPresent(md::append);
    line("");
  }

  private void scaleTable(String file) {
    line(
        "| nodes | other users' jobs | window s | slurmctld CPU s/min stopped / running | slurmrestd"
            + " CPU s/min stopped / running | all RPC ms/min stopped / running | our RPCs /min |"
            + " our RPC ms /min | our share of RPC time | job listings /min | job state checks /min"
            + " | single-job reads /min | node listings /min | single-node reads /min | MB read"
            + " /min | extender CPU s/min | extender RSS MiB, end / highest | live heap / RSS after"
            + " a full GC, MiB | drain → taint / resume → untaint, s |");
    line(
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | ---"
            + " | --- | --- | --- | --- |");
    for (Map<String, String> row : r.rows(file, "scale")) {
      Cells c = new Cells(row, "0");
      String bytes = row.get("bytes_read");
      line(
          "| "
              + String.join(
                  " | ",
                  c.get("nodes"),
                  c.get("background_jobs")
                      + ("false".equals(row.get("extender_ready")) ? ", extender never ready" : ""),
                  c.get("window_s", "60"),
                  c.get("stopped_slurmctld_cpu_s_per_min")
                      + " / "
                      + c.get("running_slurmctld_cpu_s_per_min"),
                  c.get("stopped_slurmrestd_cpu_s_per_min")
                      + " / "
                      + c.get("running_slurmrestd_cpu_s_per_min"),
                  c.get("stopped_all_rpc_ms_per_min") + " / " + c.get("running_all_rpc_ms_per_min"),
                  c.get("our_rpcs_per_min"),
                  c.get("our_rpc_ms_per_min"),
                  c.get("our_rpc_time_share_pct") + " %",
                  c.get("calls_list_jobs"),
                  c.get("calls_job_states"),
                  c.get("calls_get_job"),
                  c.get("calls_list_nodes"),
                  c.get("calls_get_node"),
                  bytes == null || bytes.isEmpty() ? "- (not counted then)" : Fmt.mb(bytes, 2),
                  c.get("extender_cpu_s_per_min"),
                  c.get("extender_rss_mib") + " / " + c.get("extender_rss_max_mib", "-"),
                  c.get("extender_heap_live_mib") + " / " + c.get("extender_rss_after_gc_mib"),
                  seconds(row.get("drain_to_taint_ms"))
                      + " / "
                      + seconds(row.get("resume_to_untaint_ms")))
              + " |");
    }
  }

  private static String seconds(String ms) {
    if (ms == null || ms.isEmpty()) {
      return "-";
    }
    double v = Fmt.number(ms);
    return v < 0 ? "not seen" : String.format("%.1f", v / 1000);
  }

  private void wakeUpAtScale() {
    line(
        "Wake-up → bound (our part: Slurm's allocation seen → pod bound) with all "
            + r.in("scale-bind.txt", "n10000.nodes_in_kubernetes")
            + " nodes in");
    line("Kubernetes (before the queues), p50 (p95), ms:");
    line("");
    line(
        "| run | single pods, hint | 64-pod burst, hint | single pods, no hint | 64-pod burst, no"
            + " hint |");
    line("| --- | --- | --- | --- | --- |");
    line("| 10,000 nodes, first | " + ourParts(k -> r.in("scale-bind.txt", "n10000." + k), true));
    if (!r.in("scale-bind.txt", "n10000again.our_part_p50_ms_single").isEmpty()) {
      line(
          "| 10,000 nodes, again | "
              + ourParts(k -> r.in("scale-bind.txt", "n10000again." + k), true));
    }
    line("| 5,000 nodes (e2e tier) | " + ourParts(k -> r.in("e2e.txt", "k5000." + k), false));
    line("| 32 nodes (e2e tier) | " + ourParts(k -> r.in("e2e.txt", "n32." + k), true));
    line("");
  }

  /** The four wake-up cells of a row, p50 with (p95) when {@code withP95}. */
  private static String ourParts(java.util.function.UnaryOperator<String> f, boolean withP95) {
    StringBuilder s = new StringBuilder();
    for (String kind : List.of("single", "burst64", "single_no_hint", "burst64_no_hint")) {
      s.append(f.apply("our_part_p50_ms_" + kind));
      if (withP95) {
        s.append(" (").append(f.apply("our_part_p95_ms_" + kind)).append(")");
      }
      s.append(" | ");
    }
    return s.toString().stripTrailing();
  }

  /** A row's fields, each with a default when the run did not record it. */
  private record Cells(Map<String, String> row, String dflt) {
    String get(String key) {
      return get(key, dflt);
    }

    String get(String key, String orElse) {
      String v = row.get(key);
      return v == null || v.isEmpty() ? orElse : v;
    }
  }
}
