package io.kse.policy;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Durations as SREs write them: {@code 90s}, {@code 5m}, {@code 1h30m}, {@code 2d}. */
public final class Durations {
  private static final Pattern PART = Pattern.compile("(\\d+)(d|h|m|s)");

  private Durations() {}

  public static Duration parse(String text) {
    String t = text == null ? "" : text.trim();
    if (t.isEmpty()) {
      throw new IllegalArgumentException("empty duration");
    }
    Matcher m = PART.matcher(t);
    Duration d = Duration.ZERO;
    int end = 0;
    while (m.find()) {
      if (m.start() != end) {
        break;
      }
      long n = Long.parseLong(m.group(1));
      d =
          d.plus(
              switch (m.group(2)) {
                case "d" -> Duration.ofDays(n);
                case "h" -> Duration.ofHours(n);
                case "m" -> Duration.ofMinutes(n);
                default -> Duration.ofSeconds(n);
              });
      end = m.end();
    }
    if (end != t.length()) {
      throw new IllegalArgumentException(
          "not a duration: '" + text + "' (use e.g. 90s, 5m, 1h30m, 2d)");
    }
    return d;
  }

  /** Slurm's time format for limits and waits: {@code [D-]HH:MM:SS}. */
  public static String slurm(Duration d) {
    long s = d.getSeconds();
    long days = s / 86400;
    String hms = String.format("%02d:%02d:%02d", (s % 86400) / 3600, (s % 3600) / 60, s % 60);
    return days > 0 ? days + "-" + hms : hms;
  }
}
