package io.kse.extender.lifecycle;

import io.kse.extender.concurrent.WorkerPool;
import io.kse.extender.k8s.PodRef;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where a step's Slurm and API calls run: on the workers, never on the pass's thread. A step that
 * fails or cannot run (shutting down) undoes what it recorded, so the next pass decides it again.
 */
final class StepWorkers {
  private static final Logger LOG = LoggerFactory.getLogger(StepWorkers.class);

  private final Executor workers;
  private final Executor first;

  StepWorkers(Executor workers) {
    this.workers = workers;
    // a pool that ranks its tasks runs these before the ones waiting; any other, in their turn
    this.first = workers instanceof WorkerPool pool ? pool::executeFirst : workers;
  }

  /** Runs a step's calls on a worker; {@code undo} when they fail or cannot be run. */
  void execute(PodRef ref, Runnable calls, Runnable undo) {
    run(workers, ref, calls, undo);
  }

  /**
   * As {@link #execute}, before the calls already waiting: a pod that can run now (its wake-up)
   * does not wait for the submissions of a burst.
   */
  void executeFirst(PodRef ref, Runnable calls, Runnable undo) {
    run(first, ref, calls, undo);
  }

  private static void run(Executor on, PodRef ref, Runnable calls, Runnable undo) {
    try {
      on.execute(
          () -> {
            try {
              calls.run();
            } catch (RuntimeException e) {
              undo.run();
              LOG.warn("step_failed pod={} uid={} error={}", ref, ref.uid(), e.toString(), e);
            }
          });
    } catch (RejectedExecutionException e) {
      undo.run();
    }
  }
}
