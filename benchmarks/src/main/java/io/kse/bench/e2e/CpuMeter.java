package io.kse.bench.e2e;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;

/**
 * CPU time per component of the stack, from {@code /proc/PID/stat} (user + system, plus the
 * children each has waited for: slurmd's job steps), for every PID file the stack and its Slurm
 * cluster keep, and this JVM as the load generator. On 2 shared cores CPU is the honest cost: a
 * component that waits costs nothing, one that polls or copies shows here whatever the wall clock
 * says.
 */
final class CpuMeter {
  static final String LOAD_GENERATOR = "load-generator";
  private static final long TICKS_PER_SECOND = ticksPerSecond();

  private final Path[] pidDirs;

  CpuMeter(Path... pidDirs) {
    this.pidDirs = pidDirs;
  }

  static CpuMeter of(BenchStack stack) {
    return new CpuMeter(
        Path.of(stack.env("KSE_E2E_DIR"), "run"), Path.of(stack.env("KSE_LAB_DIR"), "run"));
  }

  /** Component → CPU milliseconds so far; every slurmd is one component ("slurmd"). */
  Map<String, Long> snapshot() {
    Map<String, Long> ms = new TreeMap<>();
    for (Path dir : pidDirs) {
      try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, "*.pid")) {
        for (Path f : files) {
          String name = f.getFileName().toString().replaceFirst("\\.pid$", "");
          String component = name.startsWith("slurmd-") ? "slurmd" : name;
          String pid = Files.readString(f).trim();
          cpuMs(pid).ifPresent(t -> ms.merge(component, t, Long::sum));
          if (component.equals("extender")) {
            jvmThreads(pid).forEach((k, t) -> ms.put(component + "." + k, t));
          }
        }
      } catch (IOException e) {
        // a stack without that directory: nothing to count there
      }
    }
    cpuMs("self").ifPresent(t -> ms.put(LOAD_GENERATOR, t));
    return ms;
  }

  /**
   * A JVM's CPU by kind of thread: its JIT compilers and its garbage collector, whose cost a
   * long-running extender pays once or in proportion to what it allocates, apart from its own.
   */
  private static Map<String, Long> jvmThreads(String pid) {
    Map<String, Long> ms = new TreeMap<>();
    try (DirectoryStream<Path> tasks = Files.newDirectoryStream(Path.of("/proc", pid, "task"))) {
      for (Path t : tasks) {
        String stat = Files.readString(t.resolve("stat"));
        String name = stat.substring(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
        String kind =
            name.contains("CompilerThre")
                ? "jit"
                : name.startsWith("GC Thread") || name.startsWith("G1 ") ? "gc" : null;
        if (kind != null) {
          String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
          long ticks = Long.parseLong(f[11]) + Long.parseLong(f[12]);
          ms.merge(kind, ticks * 1000 / TICKS_PER_SECOND, Long::sum);
        }
      }
    } catch (IOException | RuntimeException e) {
      // not running, or a thread ended while read: counted as nothing
    }
    return ms;
  }

  /**
   * The stack's CPU in {@code spent}: every component once (an extender's per-thread-kind entries
   * are part of its own), the load generator left out.
   */
  static long stackTotal(Map<String, Long> spent) {
    return spent.entrySet().stream()
        .filter(e -> !e.getKey().contains(".") && !e.getKey().equals(LOAD_GENERATOR))
        .mapToLong(Map.Entry::getValue)
        .sum();
  }

  /** {@code after - before} per component (a component that restarted in between counts 0). */
  static Map<String, Long> spent(Map<String, Long> before, Map<String, Long> after) {
    Map<String, Long> d = new TreeMap<>();
    after.forEach((k, v) -> d.put(k, Math.max(0, v - before.getOrDefault(k, 0L))));
    return d;
  }

  private static java.util.Optional<Long> cpuMs(String pid) {
    try {
      String stat = Files.readString(Path.of("/proc", pid, "stat"));
      // fields after the command name in parentheses (which may hold spaces): state is field 3
      String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
      long ticks =
          Long.parseLong(f[11])
              + Long.parseLong(f[12])
              + Long.parseLong(f[13])
              + Long.parseLong(f[14]);
      return java.util.Optional.of(ticks * 1000 / TICKS_PER_SECOND);
    } catch (IOException | RuntimeException e) {
      return java.util.Optional.empty(); // not running
    }
  }

  private static long ticksPerSecond() {
    try {
      String out = BenchStack.exec(java.util.List.of("getconf", "CLK_TCK"), Map.of()).trim();
      return Long.parseLong(out);
    } catch (RuntimeException e) {
      return 100; // Linux's USER_HZ everywhere we run
    }
  }
}
