package io.kse.bench.e2e;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/** Percentiles (nearest rank, milliseconds) of a set of durations, and how many finished. */
record Stats(double p50, double p95, double p99, int done, int total) {

  /**
   * Durations from {@code start} to {@code end} for every key that has both (nanosecond clocks).
   */
  static <K> Stats of(Map<K, Long> start, Map<K, Long> end, Function<K, K> key, int total) {
    List<Long> d = new ArrayList<>();
    start.forEach(
        (k, t0) -> {
          Long t1 = end.get(key.apply(k));
          if (t1 != null) {
            d.add(Math.max(0, t1 - t0));
          }
        });
    return percentiles(d, total);
  }

  static Stats ofDurations(Collection<Long> nanos) {
    return percentiles(new ArrayList<>(nanos), nanos.size());
  }

  private static Stats percentiles(List<Long> nanos, int total) {
    if (nanos.isEmpty()) {
      return new Stats(Double.NaN, Double.NaN, Double.NaN, 0, total);
    }
    Collections.sort(nanos);
    return new Stats(rank(nanos, 0.50), rank(nanos, 0.95), rank(nanos, 0.99), nanos.size(), total);
  }

  private static double rank(List<Long> sorted, double q) {
    int i = (int) Math.ceil(q * sorted.size()) - 1;
    return sorted.get(Math.max(0, Math.min(sorted.size() - 1, i))) / 1e6;
  }
}
