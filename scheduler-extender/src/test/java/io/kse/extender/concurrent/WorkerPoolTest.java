package io.kse.extender.concurrent;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class WorkerPoolTest {
  private final WorkerPool pool = new WorkerPool(1, DaemonThreads.named("test-worker"));
  private final List<String> ran = new CopyOnWriteArrayList<>();

  @AfterEach
  void stop() {
    pool.shutdownNow();
  }

  /** Holds the pool's one thread until released, so what comes next waits in its queue. */
  private CountDownLatch busy() throws InterruptedException {
    CountDownLatch started = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    pool.execute(
        () -> {
          started.countDown();
          await(release);
        });
    assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
    return release;
  }

  private Runnable record(String name) {
    return () -> ran.add(name);
  }

  private void drain() throws Exception {
    Future<?> last = pool.submit(() -> {});
    last.get(10, TimeUnit.SECONDS);
  }

  @Test
  void aTaskAskedFirstRunsBeforeTheOrdinaryOnesWaiting() throws Exception {
    CountDownLatch release = busy();
    pool.execute(record("submit-1"));
    pool.execute(record("submit-2"));
    pool.executeFirst(record("wake-1"));
    pool.execute(record("submit-3"));
    pool.executeFirst(record("wake-2"));
    release.countDown();
    drain();
    assertThat(ran).containsExactly("wake-1", "wake-2", "submit-1", "submit-2", "submit-3");
  }

  @Test
  void ordinaryTasksRunInTheOrderTheyCame() throws Exception {
    CountDownLatch release = busy();
    for (int i = 0; i < 20; i++) {
      pool.execute(record("t" + i));
    }
    release.countDown();
    drain();
    assertThat(ran)
        .containsExactly(
            java.util.stream.IntStream.range(0, 20).mapToObj(i -> "t" + i).toArray(String[]::new));
  }

  @Test
  void submitsAndShutdownWorkAsForAnyExecutor() throws Exception {
    assertThat(pool.submit(() -> 42).get(10, TimeUnit.SECONDS)).isEqualTo(42);
    pool.shutdown();
    assertThat(pool.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
  }

  private static void await(CountDownLatch l) {
    try {
      l.await(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
