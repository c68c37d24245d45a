package io.kse.bench.e2e;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Function;

/**
 * One burst: when each item started (its create or submit call) and ended (seen bound or RUNNING),
 * the burst's start (t0 for all), and the CPU each component spent from t0 to the last end.
 */
record Run(
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
    long all = CpuMeter.stackTotal(cpuMs) + cpuMs.getOrDefault(CpuMeter.LOAD_GENERATOR, 0L);
    return all / (double) Math.max(1, bound.size());
  }
}
