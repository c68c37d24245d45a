package io.kse.bench.e2e;

/**
 * The figures a benchmark prints, one {@code tag.key=value} line each, for {@code benchmarks/run}
 * to collect: a run's per-item and same-t0 times, and its cost per pod by component.
 */
final class Figures {
  private final String tag;

  Figures(String tag) {
    this.tag = tag;
  }

  String tag() {
    return tag;
  }

  void line(String key, String value) {
    System.out.println(tag + "." + key + "=" + value);
  }

  /** Per-item and same-t0 figures of a run. */
  void report(String key, Run r) {
    report(key, r.ttb());
    Stats s = r.fromStart();
    line(key + "_from_start_p50_ms", String.format("%.0f", s.p50()));
    line(key + "_from_start_p99_ms", String.format("%.0f", s.p99()));
    line(key + "_makespan_ms", String.format("%.0f", r.makespanMs()));
  }

  void report(String key, Stats s) {
    line(key + "_p50_ms", String.format("%.0f", s.p50()));
    line(key + "_p95_ms", String.format("%.0f", s.p95()));
    line(key + "_p99_ms", String.format("%.0f", s.p99()));
    line(key + "_done", s.done() + "/" + s.total());
  }

  /** CPU milliseconds per bound pod (or running job), per component and in total. */
  void cost(String run, Run r) {
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
    line(
        "api_pod_writes_per_pod_" + run,
        String.format("%.2f", ApiRequests.podWrites(r.apiRequests()) / pods));
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
}
