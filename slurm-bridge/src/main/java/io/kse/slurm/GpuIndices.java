package io.kse.slurm;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads the GPU indices out of one node's entry of a job's {@code gres_detail}, as every Slurm from
 * 22.05 to 26.05 writes it: {@code gpu:h100:4(IDX:0-3)}, {@code gpu:2(IDX:0,5)}, several types
 * comma-joined ({@code gpu:a:1(IDX:0),gpu:b:1(IDX:4)}), and other GRES beside them.
 */
public final class GpuIndices {
  private static final Pattern GPU_ENTRY =
      Pattern.compile("(?:^|,)gpu(?::[^:(,]+)*(?:\\(CNT:\\d+\\))?\\(IDX:([^)]*)\\)");

  private GpuIndices() {}

  /** The sorted indices, or empty when the entry names no GPU index (no File=, or N/A). */
  public static Optional<List<Integer>> parse(String entry) {
    TreeSet<Integer> out = new TreeSet<>();
    Matcher m = GPU_ENTRY.matcher(entry == null ? "" : entry);
    while (m.find()) {
      String list = m.group(1).trim();
      if (list.isEmpty() || list.equalsIgnoreCase("N/A")) {
        continue;
      }
      for (String part : list.split(",")) {
        String[] range = part.trim().split("-", 2);
        try {
          int from = Integer.parseInt(range[0].trim());
          int to = range.length == 2 ? Integer.parseInt(range[1].trim()) : from;
          if (from < 0 || to < from || to - from > 4096) {
            return Optional.empty();
          }
          for (int i = from; i <= to; i++) {
            out.add(i);
          }
        } catch (NumberFormatException e) {
          return Optional.empty(); // a shape we do not know: say nothing rather than guess
        }
      }
    }
    return out.isEmpty() ? Optional.empty() : Optional.of(new ArrayList<>(out));
  }
}
