package io.kse.extender.concurrent;

import java.util.Optional;

/**
 * Keeps {@code CompletableFuture}'s default executor a pool. With fewer than two workers in the
 * common pool (the JVM gives it one fewer than its CPUs: one on a 2-CPU pod), the JDK runs every
 * default-executor task on a <em>new thread</em>; the JDK's HTTP client (fabric8's transport) hands
 * each answer of an asynchronous call to that executor, so the extender started and ended about
 * three threads per pod (seen in a JFR profile of a 200-pod burst on 2 CPUs: 695 threads in 26 s).
 * Must run before anything touches {@code ForkJoinPool} (the property is read once).
 */
public final class CommonPool {
  /** The system property the JDK reads for the common pool's size. */
  public static final String PARALLELISM = "java.util.concurrent.ForkJoinPool.common.parallelism";

  /** The least size that keeps the common pool in use. */
  static final int LEAST = 2;

  private CommonPool() {}

  /** Sets the common pool's size unless the operator set it; call first thing in {@code main}. */
  public static void keepAPool() {
    parallelism(
            Runtime.getRuntime().availableProcessors(),
            Optional.ofNullable(System.getProperty(PARALLELISM)))
        .ifPresent(p -> System.setProperty(PARALLELISM, Integer.toString(p)));
  }

  /**
   * The size to set, if any: none when the operator chose one; otherwise what the JDK would pick
   * (one fewer than the CPUs) but at least {@value #LEAST}.
   */
  static Optional<Integer> parallelism(int cpus, Optional<String> operatorSet) {
    if (operatorSet.isPresent()) {
      return Optional.empty();
    }
    int jdkDefault = cpus - 1;
    return jdkDefault >= LEAST ? Optional.empty() : Optional.of(LEAST);
  }
}
