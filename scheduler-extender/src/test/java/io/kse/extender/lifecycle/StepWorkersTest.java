package io.kse.extender.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;

import io.kse.extender.concurrent.DaemonThreads;
import io.kse.extender.concurrent.WorkerPool;
import io.kse.extender.k8s.PodRef;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class StepWorkersTest {
  private static final PodRef POD = new PodRef("ns", "p", "uid-1");
  private final List<String> ran = new CopyOnWriteArrayList<>();

  @Test
  void aWakeUpOvertakesTheSubmissionsWaitingOnAWorkerPool() throws Exception {
    WorkerPool pool = new WorkerPool(1, DaemonThreads.named("test-worker"));
    try {
      CountDownLatch release = new CountDownLatch(1);
      CountDownLatch started = new CountDownLatch(1);
      pool.execute(
          () -> {
            started.countDown();
            awaitQuietly(release);
          });
      assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
      StepWorkers workers = new StepWorkers(pool);
      workers.execute(POD, () -> ran.add("submit"), () -> ran.add("undo submit"));
      workers.executeFirst(POD, () -> ran.add("wake"), () -> ran.add("undo wake"));
      release.countDown();
      pool.submit(() -> {}).get(10, TimeUnit.SECONDS);
      assertThat(ran).containsExactly("wake", "submit");
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void onAnyOtherExecutorAWakeUpRunsInItsTurnAndAFailureIsUndone() {
    List<Runnable> queued = new ArrayList<>();
    StepWorkers workers = new StepWorkers(queued::add);
    workers.execute(POD, () -> ran.add("submit"), () -> ran.add("undo submit"));
    workers.executeFirst(
        POD,
        () -> {
          throw new IllegalStateException("API down");
        },
        () -> ran.add("undo wake"));
    queued.forEach(Runnable::run);
    assertThat(ran).containsExactly("submit", "undo wake");
  }

  private static void awaitQuietly(CountDownLatch l) {
    try {
      l.await(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
