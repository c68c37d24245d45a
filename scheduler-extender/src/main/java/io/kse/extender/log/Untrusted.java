package io.kse.extender.log;

/**
 * Caller-supplied text made safe for one log line: cut to a bounded length and escaped, so a
 * request can neither grow the log without bound nor forge lines (a newline in a pod name) nor
 * break the {@code key="value"} format (a quote).
 */
public final class Untrusted {
  /** Longer than any valid Kubernetes name (253), short enough that refusals stay cheap. */
  public static final int MAX_CHARS = 256;

  private Untrusted() {}

  /** The text escaped and cut to {@link #MAX_CHARS}, with how much was cut. */
  public static String text(String s) {
    if (s == null) {
      return "";
    }
    int n = Math.min(s.length(), MAX_CHARS);
    StringBuilder b = new StringBuilder(n + 16);
    for (int i = 0; i < n; i++) {
      char c = s.charAt(i);
      switch (c) {
        case '\n' -> b.append("\\n");
        case '\r' -> b.append("\\r");
        case '\t' -> b.append("\\t");
        case '"' -> b.append("\\\"");
        case '\\' -> b.append("\\\\");
        default -> {
          if (c < 0x20 || c == 0x7f || (c >= 0x80 && c < 0xa0) || c == '\u2028' || c == '\u2029') {
            b.append(String.format("\\u%04x", (int) c));
          } else {
            b.append(c);
          }
        }
      }
    }
    if (s.length() > n) {
      b.append("...(").append(s.length() - n).append(" more chars)");
    }
    return b.toString();
  }
}
