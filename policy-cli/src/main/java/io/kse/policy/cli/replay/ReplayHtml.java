package io.kse.policy.cli.replay;

import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.function.ToDoubleFunction;

/**
 * The replay's report as one HTML page that needs nothing but a browser (no script, no network):
 * the side-by-side table, the call-outs, and per policy two plots drawn as inline SVG — GPUs by
 * owner over the trace's time, and inference waiting for GPUs.
 */
public final class ReplayHtml {
  private static final int WIDTH = 720;
  private static final int HEIGHT = 180;
  private static final int PAD = 40;

  private ReplayHtml() {}

  public static String page(
      String title,
      String table,
      List<String> callouts,
      List<String> notes,
      List<ReplayRun.Outcome> runs,
      long capacityGpus) {
    StringBuilder h = new StringBuilder();
    h.append("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>")
        .append(escape(title))
        .append("</title>\n<style>body{font-family:sans-serif;margin:2em;max-width:60em}")
        .append("pre{background:#f4f4f4;padding:1em}svg{border:1px solid #ccc;margin:.5em 0}")
        .append(".inf{stroke:#c0392b}.trn{stroke:#2471a3}.cap{stroke:#999;stroke-dasharray:4}")
        .append(".wait{stroke:#d68910}polyline{fill:none;stroke-width:1.5}</style></head><body>\n")
        .append("<h1>")
        .append(escape(title))
        .append("</h1>\n<h2>Side by side</h2>\n<pre>")
        .append(escape(table))
        .append("</pre>\n");
    if (!callouts.isEmpty()) {
      h.append("<h2>What differs</h2>\n<ul>\n");
      callouts.forEach(c -> h.append("<li>").append(escape(c)).append("</li>\n"));
      h.append("</ul>\n");
    }
    if (!notes.isEmpty()) {
      h.append("<h2>How to read it</h2>\n<ul>\n");
      notes.forEach(c -> h.append("<li>").append(escape(c)).append("</li>\n"));
      h.append("</ul>\n");
    }
    for (ReplayRun.Outcome run : runs) {
      h.append("<h2>").append(escape(run.policy())).append("</h2>\n");
      h.append("<p>GPUs held: <span style=\"color:#c0392b\">inference</span>, ")
          .append("<span style=\"color:#2471a3\">training</span>, capacity dashed</p>\n");
      h.append(
          plot(
              run.samples(),
              capacityGpus,
              List.of(
                  new Series("inf", s -> s.inferenceGpus()),
                  new Series("trn", s -> s.trainingGpus()))));
      h.append("<p>Inference waiting for GPUs</p>\n");
      long maxWaiting = run.samples().stream().mapToLong(ReplayRun.Sample::waiting).max().orElse(0);
      h.append(
          plot(
              run.samples(),
              Math.max(1, maxWaiting),
              List.of(new Series("wait", s -> s.waiting()))));
    }
    h.append("</body></html>\n");
    return h.toString();
  }

  private record Series(String css, ToDoubleFunction<ReplayRun.Sample> value) {}

  /** One plot: the trace's time across, 0..{@code max} up, a dashed line at {@code max}. */
  private static String plot(List<ReplayRun.Sample> samples, double max, List<Series> series) {
    double end =
        samples.isEmpty() ? 1 : Math.max(1, samples.get(samples.size() - 1).at().toMillis());
    StringBuilder s = new StringBuilder();
    s.append("<svg width=\"")
        .append(WIDTH)
        .append("\" height=\"")
        .append(HEIGHT)
        .append("\" viewBox=\"0 0 ")
        .append(WIDTH)
        .append(' ')
        .append(HEIGHT)
        .append("\" xmlns=\"http://www.w3.org/2000/svg\">");
    double top = y(max, max);
    s.append(
        String.format(
            Locale.ROOT,
            "<line class=\"cap\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>",
            PAD,
            top,
            WIDTH - 5,
            top));
    s.append(
        String.format(
            Locale.ROOT,
            "<text x=\"2\" y=\"%.1f\" font-size=\"10\">%.0f</text><text x=\"2\" y=\"%d\""
                + " font-size=\"10\">0</text><text x=\"%d\" y=\"%d\" font-size=\"10\">%s</text>",
            top + 4,
            max,
            HEIGHT - PAD + 4,
            WIDTH - 60,
            HEIGHT - 5,
            hours(Duration.ofMillis((long) end))));
    for (Series line : series) {
      s.append("<polyline class=\"").append(line.css()).append("\" points=\"");
      for (ReplayRun.Sample p : samples) {
        double x = PAD + (WIDTH - PAD - 5) * p.at().toMillis() / end;
        s.append(
            String.format(Locale.ROOT, "%.1f,%.1f ", x, y(line.value().applyAsDouble(p), max)));
      }
      s.append("\"/>");
    }
    return s.append("</svg>\n").toString();
  }

  private static double y(double v, double max) {
    return HEIGHT - PAD - (HEIGHT - PAD - 10) * Math.min(v, max) / max;
  }

  private static String hours(Duration d) {
    return String.format(Locale.ROOT, "%.1f h", d.toMillis() / 3_600_000.0);
  }

  static String escape(String s) {
    return s.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace("\"", "&quot;");
  }
}
