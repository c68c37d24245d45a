package io.kse.policy;

import java.math.BigDecimal;
import java.math.RoundingMode;

/**
 * Kubernetes resource quantities ({@code 500m}, {@code 2}, {@code 1.5Gi}, {@code 128974848}, {@code
 * 1e3}) converted to whole units: millicores for CPU, bytes for memory, counts for extended
 * resources.
 */
public final class Quantity {
  private Quantity() {}

  /** The value in base units (e.g. cores, bytes), exact. */
  public static BigDecimal parse(String text) {
    if (text == null || text.isBlank()) {
      throw new IllegalArgumentException("empty quantity");
    }
    String t = text.trim();
    String[][] suffixes = {
      {"Ki", "1024"},
      {"Mi", "1048576"},
      {"Gi", "1073741824"},
      {"Ti", "1099511627776"},
      {"Pi", "1125899906842624"},
      {"Ei", "1152921504606846976"},
      {"n", "0.000000001"},
      {"u", "0.000001"},
      {"m", "0.001"},
      {"k", "1000"},
      {"M", "1000000"},
      {"G", "1000000000"},
      {"T", "1000000000000"},
      {"P", "1000000000000000"},
      {"E", "1000000000000000000"}
    };
    for (String[] s : suffixes) {
      if (t.endsWith(s[0]) && t.length() > s[0].length()) {
        return number(t.substring(0, t.length() - s[0].length()), text)
            .multiply(new BigDecimal(s[1]));
      }
    }
    return number(t, text);
  }

  private static BigDecimal number(String digits, String original) {
    try {
      BigDecimal v = new BigDecimal(digits);
      if (v.signum() < 0) {
        throw new IllegalArgumentException("negative quantity '" + original + "'");
      }
      return v;
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("not a Kubernetes quantity: '" + original + "'");
    }
  }

  /** CPU in millicores, rounded up (Kubernetes' own rounding for CPU). */
  public static long millis(String text) {
    return parse(text).movePointRight(3).setScale(0, RoundingMode.CEILING).longValueExact();
  }

  /** A whole-unit value (bytes, GPUs), rounded up. */
  public static long units(String text) {
    return parse(text).setScale(0, RoundingMode.CEILING).longValueExact();
  }
}
