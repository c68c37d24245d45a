package io.kse.e2e;

import java.util.HashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The soak's fifth promise: no 5xx to kube-scheduler. Counts the verbs' answers that were internal
 * errors (500) or busy refusals (503) from each replica's {@code kse_<verb>_duration_seconds_count}
 * series, across restarts: a replica killed and started again begins its counters at zero, so what
 * it had counted before is banked when a sample is lower than the last.
 */
final class VerbErrors {
  private static final Pattern SERIES =
      Pattern.compile(
          "^kse_(filter|prioritize|preempt|bind)_duration_seconds_count\\{([^}]*)}\\s+(\\S+)$");
  private static final Pattern FIVE_XX = Pattern.compile("outcome=\"(error|busy)\"");

  private final Map<String, Double> last = new HashMap<>();
  private final Map<String, Double> banked = new HashMap<>();

  /** One sample of one replica's /metrics. */
  synchronized void sample(String replica, String metrics) {
    double now = 0;
    for (String line : metrics.split("\n")) {
      Matcher m = SERIES.matcher(line.trim());
      if (m.matches() && FIVE_XX.matcher(m.group(2)).find()) {
        now += Double.parseDouble(m.group(3));
      }
    }
    double before = last.getOrDefault(replica, 0.0);
    if (now < before) {
      banked.merge(replica, before, Double::sum); // restarted: its counters began again
    }
    last.put(replica, now);
  }

  /** 5xx answers seen so far, all replicas, all their lives. */
  synchronized long total() {
    double sum = 0;
    for (double v : last.values()) {
      sum += v;
    }
    for (double v : banked.values()) {
      sum += v;
    }
    return Math.round(sum);
  }
}
