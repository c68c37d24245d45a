package io.kse.bench.report;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * The benchmark tiers' raw output in {@code benchmarks/raw/}: {@code key=value} lines in the tiers'
 * {@code *.txt} files (the last line of a key wins, files in name order), rows of {@code key=value}
 * fields (the scale and Slurm-load tiers), the JMH table, and each tier's date. A figure that is
 * missing reads as the empty string, as a missing figure shows in the report.
 */
final class Raw {
  private final Path dir;
  private final Map<String, String> figures = new LinkedHashMap<>();

  Raw(Path dir) {
    this.dir = dir;
    List<Path> txt = new ArrayList<>();
    try (Stream<Path> files = Files.list(dir)) {
      files.filter(p -> p.getFileName().toString().endsWith(".txt")).sorted().forEach(txt::add);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    for (Path p : txt) {
      for (String line : lines(p.getFileName().toString())) {
        int eq = line.indexOf('=');
        if (eq > 0 && !line.startsWith("scale ") && !line.startsWith("slurm_load ")) {
          figures.put(line.substring(0, eq), line.substring(eq + 1));
        }
      }
    }
  }

  /** A figure of the last runs, e.g. {@code n32.ttb_p50_ms}; "" when none was recorded. */
  String v(String key) {
    return figures.getOrDefault(key, "");
  }

  /** A figure of the e2e run before issue 30's CPU work (its raw lines, kept apart from *.txt). */
  String before(String key) {
    return in("e2e-before-issue30-cpu.lines", key);
  }

  /** A figure of one raw file's {@code key=value} lines (the last); "" when none. */
  String in(String file, String key) {
    return last(lines(file), key);
  }

  private static String last(List<String> lines, String key) {
    String values = "";
    for (String l : lines) {
      if (l.startsWith(key + "=")) {
        values = l.substring(key.length() + 1);
      }
    }
    return values;
  }

  /** The rows of a file whose lines start with {@code kind} and a space, as field maps. */
  List<Map<String, String>> rows(String file, String kind) {
    List<Map<String, String>> out = new ArrayList<>();
    for (String l : lines(file)) {
      if (l.startsWith(kind + " ")) {
        Map<String, String> row = new LinkedHashMap<>();
        for (String field : l.substring(kind.length() + 1).split(" ")) {
          int eq = field.indexOf('=');
          if (eq > 0) {
            row.putIfAbsent(field.substring(0, eq), field.substring(eq + 1));
          }
        }
        out.add(row);
      }
    }
    return out;
  }

  /** A figure of the scale tier's row for about {@code jobs} background jobs (±1 %). */
  String scale(int jobs, String key) {
    return scaleIn("scale.txt", jobs, key);
  }

  /** The same from the last {@code benchmarks/run scale-check} (one queue size). */
  String scaleCheck(int jobs, String key) {
    return scaleIn("scale-check.txt", jobs, key);
  }

  private String scaleIn(String file, int jobs, String key) {
    String found = "";
    for (Map<String, String> row : rows(file, "scale")) {
      double b = Fmt.number(row.getOrDefault("background_jobs", "0"));
      if (b >= jobs * 0.99 && b <= jobs * 1.01) {
        found = row.getOrDefault(key, "");
      }
    }
    return found;
  }

  /**
   * FilterPathBenchmark's p99 at 5,000 names, allocated (µs), from the JMH table: the figure after
   * the mode column, wherever it is (every benchmark's parameters are columns of the one table,
   * "N/A" where a benchmark has none: another benchmark's parameter moves the columns).
   */
  String jmhP99At5000() {
    String found = "";
    for (String l : lines("jmh.txt")) {
      List<String> f = List.of(l.trim().split("\\s+"));
      int mode = f.indexOf("sample");
      if (f.get(0).endsWith("FilterPathBenchmark.filter:p0.99")
          && f.contains("5000")
          && f.contains("allocated")
          && mode > 0
          && mode + 1 < f.size()) {
        found = f.get(mode + 1);
      }
    }
    return found;
  }

  /** A tier's date file (e.g. "e2e" → the e2e tier's last run), if it has one. */
  Optional<String> date(String name) {
    return text(name + ".date").map(String::strip);
  }

  boolean has(String file) {
    try {
      return Files.size(dir.resolve(file)) > 0;
    } catch (IOException e) {
      return false;
    }
  }

  Optional<String> text(String file) {
    try {
      return Optional.of(Files.readString(dir.resolve(file)));
    } catch (IOException e) {
      return Optional.empty();
    }
  }

  List<String> lines(String file) {
    return text(file).map(t -> t.lines().toList()).orElse(List.of());
  }
}
