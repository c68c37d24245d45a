package io.kse.extender;

import java.util.function.IntConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Gives back the heap that reading slurmctld's whole job table grew. The listing is streamed and
 * only our jobs are kept, but at 50,000 jobs it is some 450 MB of JSON parsed in minutes: G1 grows
 * its young generation for that garbage and nothing after it shrinks the heap again — steady state
 * collects often enough that the periodic collection never runs. On the scale rig the extender
 * stayed at 421 MiB of RSS with 40 MiB live; one full collection brought it to 194 (the
 * Deployment's MaxHeapFreeRatio=20 returns the rest). So after a listing of at least {@link
 * #LARGE_TABLE} jobs (at start, on takeover, and the safety net's, minutes apart at that size), one
 * collection.
 */
final class HeapAfterLargeListing implements IntConsumer {
  private static final Logger LOG = LoggerFactory.getLogger(HeapAfterLargeListing.class);

  /**
   * From this many jobs in the table: at 20,000 the extender's RSS stayed at 253-272 MiB without
   * it; below, a listing's garbage is what ordinary collections take.
   */
  static final int LARGE_TABLE = 10_000;

  private final Runnable collect;

  /**
   * @param collect a full collection ({@code System::gc}; the JVM's default, not
   *     ExplicitGCInvokesConcurrent, is the one that shrinks the heap)
   */
  HeapAfterLargeListing(Runnable collect) {
    this.collect = collect;
  }

  @Override
  public void accept(int tableSize) {
    if (tableSize < LARGE_TABLE) {
      return;
    }
    Runtime rt = Runtime.getRuntime();
    long before = rt.totalMemory();
    long began = System.nanoTime();
    collect.run();
    LOG.info(
        "heap_collected_after_listing tableJobs={} pauseMs={} committedMiB={}->{}",
        tableSize,
        (System.nanoTime() - began) / 1_000_000,
        before >> 20,
        rt.totalMemory() >> 20);
  }
}
