package io.kse.slurm.cache;

import io.kse.slurm.SlurmJob;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * "Slurm just allocated job N" (Slurm's PrologSlurmctld, manifests/slurm/kse-allocation-hint): the
 * cache reads that job now instead of waiting for its next poll. The hint is not trusted — it only
 * makes the cache look sooner, through slurmrestd as always — and costs at most {@link
 * #FOLLOW_UPS}' size plus one reads of that one job (SlurmStateCache#refreshJob: a few KB, where a
 * poll in a burst is the whole job table), {@link #READERS} hints at a time; past {@link
 * #MAX_QUEUED} waiting reads, or when a read fails, one poll instead (SlurmStateCache#pollSoon, at
 * most one per gap).
 *
 * <p>Slurm runs PrologSlurmctld while the job is still CONFIGURING, so the first look may be too
 * early: until the cache holds the job with its nodes (or ended), it looks again after each of
 * {@link #FOLLOW_UPS}.
 */
public final class AllocationHints implements SlurmHookEvents, AutoCloseable {
  static final List<Duration> FOLLOW_UPS =
      List.of(Duration.ofMillis(30), Duration.ofMillis(100), Duration.ofMillis(300));

  /**
   * Hints read at once. One at a time, a 200-pod burst's hints queued behind each other's reads
   * (tens of ms each on a loaded slurmrestd): the last started placeholders were seen seconds late.
   */
  static final int READERS = 4;

  /** Reads waiting beyond 256 hints' worth mean a flood: one listing serves them all. */
  static final int MAX_QUEUED = 256 * (1 + FOLLOW_UPS.size());

  private final SlurmStateCache cache;
  private final Duration minGap;
  private final java.util.concurrent.ScheduledThreadPoolExecutor timer;
  private final Counter hinted;

  /**
   * What the latest look at a job found, until its last follow-up: a read that a pass under way
   * will publish counts as seen, so the follow-ups do not read it again meanwhile.
   */
  private final java.util.Map<Long, SlurmJob> looked =
      new java.util.concurrent.ConcurrentHashMap<>();

  public AllocationHints(SlurmStateCache cache, Duration minGap, MeterRegistry registry) {
    this.cache = cache;
    this.minGap = minGap;
    this.hinted =
        Counter.builder(io.kse.slurm.MetricNames.HINTED_READS)
            .description(
                "Reads of Slurm asked for by allocation hints (one job each, or a poll in a"
                    + " flood), besides the regular polls")
            .register(registry);
    this.timer =
        new java.util.concurrent.ScheduledThreadPoolExecutor(
            READERS,
            r -> {
              Thread t = new Thread(r, "kse-allocation-hints");
              t.setDaemon(true);
              return t;
            });
  }

  /**
   * Slurm says it allocated {@code jobId}: look now, and again until the cache sees it. The cache
   * also tracks the id, so that if every look fails (slurmrestd down as the hint came) its checks
   * keep reading the job until they see it: without that, a replica that did not submit the job
   * would not know it until the next full listing, minutes on, and would keep answering filter
   * calls for its pod "not submitted" (a 60-minute soak left a pod 104 s unbound that way).
   */
  @Override
  public void allocated(long jobId) {
    if (cache.dismissed(jobId)) {
      return; // read lately and found not ours, or twice not there: a repeated name costs nothing
    }
    cache.allocationHinted(jobId);
    lookUntil(jobId, AllocationHints::settled);
  }

  /**
   * Slurm says {@code jobId} ended on {@code nodes} (EpilogSlurmctld, for every job): one of ours
   * is looked at now, and again until the cache sees it ending, ended or requeued; another user's
   * is left to the cache, which reads it only if it may have been preempted for us.
   */
  @Override
  public void ended(long jobId, List<String> nodes) {
    if (cache.knows(jobId)) {
      lookUntil(jobId, AllocationHints::over);
    } else {
      cache.endedElsewhere(jobId, nodes);
    }
  }

  /**
   * Slurm's node trigger says these nodes changed state: the cache reads them now (one {@code GET
   * node} each, or the node table when many), off the caller's thread.
   */
  @Override
  public void nodesChanged(List<String> nodes) {
    try {
      timer.execute(
          () -> {
            hinted.increment();
            cache.refreshNodes(nodes); // a read that fails: the node table on the next pass
          });
    } catch (RejectedExecutionException e) {
      // closed
    }
  }

  private void lookUntil(long jobId, java.util.function.Predicate<SlurmJob> seen) {
    java.util.function.LongPredicate done =
        id ->
            cache.job(id).map(seen::test).orElse(false)
                || Optional.ofNullable(looked.get(id)).map(seen::test).orElse(false);
    if (done.test(jobId)) {
      return; // a regular poll was faster
    }
    long at = 0;
    try {
      timer.execute(() -> look(jobId)); // off the caller's thread: an HTTP route's event loop
      for (int i = 0; i < FOLLOW_UPS.size(); i++) {
        at += FOLLOW_UPS.get(i).toMillis();
        boolean last = i == FOLLOW_UPS.size() - 1;
        timer.schedule(
            () -> {
              if (!done.test(jobId)) {
                look(jobId);
              }
              if (last) {
                looked.remove(jobId);
              }
            },
            at,
            TimeUnit.MILLISECONDS);
      }
    } catch (RejectedExecutionException e) {
      // closed
    }
  }

  private void look(long jobId) {
    hinted.increment();
    if (timer.getQueue().size() > MAX_QUEUED) {
      cache.pollSoon(minGap);
      return;
    }
    try {
      cache.refreshJob(jobId).ifPresent(j -> looked.put(jobId, j));
    } catch (RuntimeException e) { // slurmrestd did not answer for it: the listing will
      cache.pollSoon(minGap);
    }
  }

  /** The job holds its nodes, or ended: nothing more to look for. */
  private static boolean settled(SlurmJob j) {
    return j.state().holdsNodes() || j.state().isFinal();
  }

  /**
   * The job ended, is ending (COMPLETING: the lifecycle reads why from it, a requeue by its restart
   * count; the node Epilog may keep it so for seconds, and the passes read its last state), or went
   * back to pending (requeued).
   */
  private static boolean over(SlurmJob j) {
    return j.state().isFinal()
        || j.state() == io.kse.slurm.JobState.COMPLETING
        || j.state() == io.kse.slurm.JobState.PENDING;
  }

  @Override
  public void close() {
    timer.shutdownNow();
  }
}
