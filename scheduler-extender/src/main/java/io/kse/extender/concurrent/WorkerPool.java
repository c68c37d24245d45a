package io.kse.extender.concurrent;

import java.util.concurrent.PriorityBlockingQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A fixed pool of threads that serves its tasks in order, except that a task given to {@link
 * #executeFirst} runs before every ordinary one still waiting. Issue 47: in a burst, the wake-up of
 * a pod whose placeholder Slurm had already started waited behind the rest of the burst's
 * submissions, which slurmctld takes one at a time — the pod could run, and sat in the queue.
 */
public final class WorkerPool extends ThreadPoolExecutor {
  private final AtomicLong arrivals = new AtomicLong();

  public WorkerPool(int threads, ThreadFactory threadFactory) {
    super(threads, threads, 0, TimeUnit.MILLISECONDS, new PriorityBlockingQueue<>(), threadFactory);
  }

  @Override
  public void execute(Runnable task) {
    super.execute(new Ranked(task, false, arrivals.getAndIncrement()));
  }

  /** Runs {@code task} as soon as a thread is free, before the ordinary tasks waiting. */
  public void executeFirst(Runnable task) {
    super.execute(new Ranked(task, true, arrivals.getAndIncrement()));
  }

  /** First tasks before the others; within each, in the order they came. */
  private record Ranked(Runnable task, boolean first, long arrival)
      implements Runnable, Comparable<Ranked> {
    @Override
    public void run() {
      task.run();
    }

    @Override
    public int compareTo(Ranked o) {
      return first != o.first ? (first ? -1 : 1) : Long.compare(arrival, o.arrival);
    }
  }
}
