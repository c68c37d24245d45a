package io.kse.bench.e2e;

import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The API server's own count of the requests it served ({@code apiserver_request_total}), per verb
 * and resource: what each bound pod cost it in writes, ours next to the default scheduler's. Every
 * client is counted (the schedulers, kwok, the controllers, the load generator), as the CPU meter
 * counts every process.
 */
final class ApiRequests {
  private static final Pattern LINE =
      Pattern.compile("^apiserver_request_total\\{(.*)\\} ([0-9.e+]+)$");
  private static final Pattern LABEL = Pattern.compile("(\\w+)=\"([^\"]*)\"");
  private static final Set<String> WRITES = Set.of("POST", "PUT", "PATCH", "DELETE", "APPLY");

  private final KubernetesClient kube;

  ApiRequests(KubernetesClient kube) {
    this.kube = kube;
  }

  /** "VERB resource[/subresource]" → requests so far (empty when /metrics cannot be read). */
  Map<String, Long> snapshot() {
    Map<String, Long> counts = new TreeMap<>();
    String text;
    try {
      text = kube.raw("/metrics");
    } catch (RuntimeException e) {
      return counts;
    }
    if (text == null) {
      return counts;
    }
    for (String l : text.split("\n")) {
      Matcher m = LINE.matcher(l);
      if (!m.matches()) {
        continue;
      }
      Map<String, String> labels = new TreeMap<>();
      Matcher lm = LABEL.matcher(m.group(1));
      while (lm.find()) {
        labels.put(lm.group(1), lm.group(2));
      }
      String sub = labels.getOrDefault("subresource", "");
      String key =
          labels.getOrDefault("verb", "?")
              + " "
              + labels.getOrDefault("resource", "?")
              + (sub.isEmpty() ? "" : "/" + sub);
      counts.merge(key, (long) Double.parseDouble(m.group(2)), Long::sum);
    }
    return counts;
  }

  /**
   * A snapshot once Events have stopped arriving (up to 15 s): Events are posted from queues after
   * the decisions they tell of, so a count taken at the last bind would miss some of them.
   */
  Map<String, Long> settled() throws InterruptedException {
    Map<String, Long> last = snapshot();
    long deadline = System.nanoTime() + 15_000_000_000L;
    while (System.nanoTime() < deadline) {
      Thread.sleep(1000);
      Map<String, Long> now = snapshot();
      if (now.getOrDefault(EVENTS, 0L).equals(last.getOrDefault(EVENTS, 0L))) {
        return now;
      }
      last = now;
    }
    return last;
  }

  private static final String EVENTS = "POST events";

  /** {@code after - before} per key, keys that did not change left out. */
  static Map<String, Long> spent(Map<String, Long> before, Map<String, Long> after) {
    Map<String, Long> d = new TreeMap<>();
    after.forEach(
        (k, v) -> {
          long n = v - before.getOrDefault(k, 0L);
          if (n > 0) {
            d.put(k, n);
          }
        });
    return d;
  }

  static boolean isWrite(String key) {
    return WRITES.contains(key.substring(0, key.indexOf(' ')));
  }

  static long writes(Map<String, Long> spent) {
    return spent.entrySet().stream()
        .filter(e -> isWrite(e.getKey()))
        .mapToLong(Map.Entry::getValue)
        .sum();
  }

  /**
   * The writes the pods caused: all but the Leases', which are heartbeats (kwok renews a Lease per
   * node every 10 s, each scheduler and the extender their election's every 2 s) and so grow with
   * how long a burst lasts, not with its pods.
   */
  static long podWrites(Map<String, Long> spent) {
    return spent.entrySet().stream()
        .filter(e -> isWrite(e.getKey()) && !e.getKey().endsWith(" leases"))
        .mapToLong(Map.Entry::getValue)
        .sum();
  }
}
