package io.kse.bench.e2e;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Multi-node groups on free capacity, one at a time, each from its first pod's creation to its last
 * member bound: groups of 8-GPU pods ({@code kse.io/group}), and TPU slices (issue 45) — a 4-host
 * v5p 2x2x4 slice and a multislice of two.
 */
final class GroupBench {
  private final Bursts bursts;
  private final Figures out;
  private final String scheduler;

  GroupBench(Bursts bursts, Figures out, String scheduler) {
    this.bursts = bursts;
    this.out = out;
    this.scheduler = scheduler;
  }

  /** {@code rounds} slices of 4 TPU hosts, then as many multislices of two. */
  void tpuSlices(int rounds) throws Exception {
    PodShape tpu = PodShape.gpus(scheduler, 8).tpu("2x2x4");
    groups(tpu, 4, rounds, "tpu_slice_ttb_%s_2x2x4");
    groups(tpu, 8, rounds, "tpu_multislice_ttb_%s_2x2x4x2");
  }

  /**
   * {@code rounds} groups of {@code size} 8-GPU pods. {@code key}: the figures' names, {@code %s}
   * standing for p50_ms, p95_ms, done.
   */
  void groups(int size, int rounds, String key) throws Exception {
    groups(PodShape.gpus(scheduler, 8), size, rounds, key);
  }

  private void groups(PodShape members, int size, int rounds, String key) throws Exception {
    PodShape shape =
        members.annotated(
            name ->
                Map.of(
                    "kse.io/group", "g",
                    "kse.io/group-size", Integer.toString(size),
                    "kse.io/group-index", name.substring("pod-".length())));
    List<Long> times = new ArrayList<>();
    for (int r = 0; r < rounds; r++) {
      Run run = bursts.bound("bench-group-" + size + "-" + r + "-" + out.tag(), shape, size);
      if (run.bound().size() != size) {
        System.err.println(
            "group of "
                + size
                + " not bound whole ("
                + run.bound().size()
                + "): stopping this size");
        break;
      }
      long first = run.created().values().stream().mapToLong(Long::longValue).min().orElseThrow();
      long last = run.bound().values().stream().mapToLong(Long::longValue).max().orElseThrow();
      times.add(last - first);
    }
    Stats s = Stats.ofDurations(times);
    out.line(String.format(key, "p50_ms"), String.format("%.0f", s.p50()));
    out.line(String.format(key, "p95_ms"), String.format("%.0f", s.p95()));
    out.line(String.format(key, "done"), times.size() + "/" + rounds);
  }
}
