package io.kse.bench.report;

/** How the report writes numbers: as the benchmark printed them, or computed the same way. */
final class Fmt {
  private Fmt() {}

  /** The number a figure holds; 0 when it holds none (a missing figure counts as 0). */
  static double number(String s) {
    try {
      return Double.parseDouble(s.trim());
    } catch (NumberFormatException e) {
      return 0;
    }
  }

  /** {@code a / b} to two places, or "-" unless both are positive. */
  static String ratio(String a, String b) {
    double x = number(a);
    double y = number(b);
    return x > 0 && y > 0 ? String.format("%.2f", x / y) : "-";
  }

  /** The sum of two figures, as a figure. */
  static String sum(String a, String b) {
    double s = number(a) + number(b);
    return s == Math.rint(s) ? Long.toString((long) s) : Double.toString(s);
  }

  /** Bytes as megabytes (10^6) to {@code places} places. */
  static String mb(String bytes, int places) {
    return String.format("%." + places + "f", number(bytes) / 1e6);
  }

  /** For results.json: the figure if it is a plain non-negative number, else null. */
  static String json(String s) {
    return s.matches("[0-9.]+") ? s : "null";
  }
}
