package io.kse.bench.e2e;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Map;

/**
 * What the stack's extender says of itself on /metrics: its filter latency over its life, and its
 * Slurm calls by operation (what a run cost Slurm per pod).
 */
final class ExtenderScrape {
  private final String extenderUrl;
  private final Figures out;

  ExtenderScrape(String extenderUrl, Figures out) {
    this.extenderUrl = extenderUrl;
    this.out = out;
  }

  /**
   * The extender's own filter latency over its life, from its histogram: the mean (which the first,
   * cold calls dominate) and the share of calls answered within 1 ms.
   */
  double[] filterLatency() {
    try {
      String metrics = extenderMetrics();
      double sum = 0;
      double count = 0;
      double fast = 0;
      for (String l : metrics.split("\n")) {
        double v = l.startsWith("kse_filter_duration_seconds") ? value(l) : 0;
        if (l.startsWith("kse_filter_duration_seconds_sum")) {
          sum += v;
        } else if (l.startsWith("kse_filter_duration_seconds_count")) {
          count += v;
        } else if (l.startsWith("kse_filter_duration_seconds_bucket")
            && l.contains("le=\"0.001\"")) {
          fast += v;
        }
      }
      return count == 0
          ? new double[] {Double.NaN, Double.NaN}
          : new double[] {sum / count * 1e6, 100 * fast / count};
    } catch (IOException | InterruptedException e) {
      return new double[] {Double.NaN, Double.NaN};
    }
  }

  private String extenderMetrics() throws IOException, InterruptedException {
    return HttpClient.newHttpClient()
        .send(
            HttpRequest.newBuilder(URI.create(extenderUrl + "/metrics")).build(),
            HttpResponse.BodyHandlers.ofString())
        .body();
  }

  /**
   * The extender's Slurm calls so far by operation (retries included), and their summed seconds
   * under the key {@code operation + "_seconds"}: empty when the extender is not running.
   */
  Map<String, Double> slurmCalls() {
    Map<String, Double> calls = new java.util.TreeMap<>();
    try {
      for (String l : extenderMetrics().split("\n")) {
        boolean count = l.startsWith("kse_slurm_request_duration_seconds_count{");
        boolean sum = l.startsWith("kse_slurm_request_duration_seconds_sum{");
        java.util.regex.Matcher m =
            java.util.regex.Pattern.compile("operation=\"([^\"]+)\"").matcher(l);
        if ((count || sum) && m.find()) {
          calls.merge(m.group(1) + (sum ? "_seconds" : ""), value(l), Double::sum);
        }
      }
    } catch (IOException | InterruptedException e) {
      // no extender: no calls to count
    }
    return calls;
  }

  private static double value(String line) {
    return Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
  }

  // ------------------------------------------------------------------------------ output

  /**
   * The extender's Slurm calls per bound pod by operation, and the mean latency of its submits (the
   * slurmrestd path {@code SubmitThroughput} measures alone).
   */
  void slurmCallsPerPod(
      String run, Map<String, Double> before, Map<String, Double> after, int pods) {
    after.forEach(
        (op, v) -> {
          double d = v - before.getOrDefault(op, 0.0);
          if (!op.endsWith("_seconds") && d > 0) {
            out.line(
                "slurm_calls_per_pod" + run + "." + op,
                String.format("%.2f", d / Math.max(1, pods)));
          }
        });
    double submits = after.getOrDefault("submit", 0.0) - before.getOrDefault("submit", 0.0);
    double seconds =
        after.getOrDefault("submit_seconds", 0.0) - before.getOrDefault("submit_seconds", 0.0);
    if (submits > 0) {
      out.line("our_submit_mean_ms" + run, String.format("%.1f", seconds / submits * 1e3));
    }
  }
}
