package io.kse.slurm;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * Slurm host list expressions ({@code gpu-node-[0-3,7],cpu-1}) to and from plain node names. Zero
 * padding in ranges ({@code n[01-10]}) is kept.
 */
public final class HostList {
  private HostList() {}

  public static List<String> expand(String expression) {
    return expand(expression, Integer.MAX_VALUE);
  }

  /**
   * As {@link #expand(String)}, refusing (IllegalArgumentException) an expression of more than
   * {@code max} names before building them: for expressions from outside.
   */
  public static List<String> expand(String expression, int max) {
    List<String> out = new ArrayList<>();
    if (expression == null || expression.isBlank() || expression.equals("(null)")) {
      return out;
    }
    for (String item : splitTopLevel(expression.trim())) {
      expandItem(item, out, max);
    }
    return out;
  }

  /** Joins names with commas: always a valid host list, no compression needed by Slurm. */
  public static String join(Collection<String> names) {
    return String.join(",", names);
  }

  private static List<String> splitTopLevel(String s) {
    List<String> parts = new ArrayList<>();
    int depth = 0;
    int start = 0;
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '[') {
        depth++;
      } else if (c == ']') {
        depth--;
      } else if (c == ',' && depth == 0) {
        parts.add(s.substring(start, i));
        start = i + 1;
      }
    }
    parts.add(s.substring(start));
    parts.removeIf(String::isBlank);
    return parts;
  }

  private static void expandItem(String item, List<String> out, int max) {
    int open = item.indexOf('[');
    if (open < 0) {
      if (out.size() >= max) {
        throw new IllegalArgumentException("host list of more than " + max + " names");
      }
      out.add(item);
      return;
    }
    int close = item.indexOf(']', open);
    if (close < 0) {
      throw new IllegalArgumentException("unbalanced '[' in host list item '" + item + "'");
    }
    String prefix = item.substring(0, open);
    String suffix = item.substring(close + 1);
    for (String range : item.substring(open + 1, close).split(",")) {
      String[] bounds = range.split("-", 2);
      int width = bounds[0].length();
      int from = Integer.parseInt(bounds[0]);
      int to = bounds.length == 2 ? Integer.parseInt(bounds[1]) : from;
      for (int i = from; i <= to; i++) {
        // the suffix may hold another bracket group, e.g. rack[1-2]-n[1-4]
        expandItem(prefix + String.format("%0" + width + "d", i) + suffix, out, max);
      }
    }
  }
}
