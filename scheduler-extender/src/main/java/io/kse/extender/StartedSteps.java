package io.kse.extender;

import java.util.Deque;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedDeque;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The service's start steps that ran, each with how to undo it: undone newest first, each on its
 * own, so one that fails to stop does not keep the others running.
 */
final class StartedSteps {
  private static final Logger LOG = LoggerFactory.getLogger(StartedSteps.class);

  private record Step(String name, Runnable stop) {}

  private final Deque<Step> started = new ConcurrentLinkedDeque<>();

  /** Runs {@code start}; once it returned, {@code stop} is what undoes it. */
  void run(String name, Runnable start, Runnable stop) {
    start.run();
    ran(name, stop);
  }

  /** A step that already ran (its start had more to do than one call). */
  void ran(String name, Runnable stop) {
    started.push(new Step(name, stop));
    LOG.debug("started step={}", name);
  }

  /** The steps that ran, in the order {@link #undoAll} undoes them (newest first). */
  List<String> names() {
    return started.stream().map(Step::name).toList();
  }

  /** Undoes the steps that ran, newest first; one failing step does not stop the others. */
  void undoAll() {
    while (!started.isEmpty()) {
      Step s = started.pop();
      try {
        s.stop().run();
      } catch (RuntimeException e) {
        LOG.warn("shutdown_step_failed step={} error={}", s.name(), e.toString());
      }
    }
  }
}
