package io.kse.extender.lifecycle;

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

  StepWorkers(Executor workers) {
    this.workers = workers;
  }

  /** Runs a step's calls on a worker; {@code undo} when they fail or cannot be run. */
  void execute(PodRef ref, Runnable calls, Runnable undo) {
    try {
      workers.execute(
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
