package io.kse.slurm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kse.slurm.testing.FakeSlurmClient;
import io.kse.slurm.testing.MutableClock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class SubmissionOrderTest {
  final MutableClock clock = new MutableClock(Instant.parse("2026-12-08T00:00:00Z"));
  final FakeSlurmClient slurm = new FakeSlurmClient(clock, "n0");
  final SubmissionOrder order =
      new SubmissionOrder(id -> slurm.job(id).map(SlurmJob::state), clock);

  static JobSubmission placeholder(String name, String partition) {
    return JobSubmission.builder(new PlaceholderTag("ns", name, "uid-" + name))
        .partition(partition)
        .gresPerNode("gpu:h100:1")
        .workingDirectory("/tmp")
        .environment(java.util.Map.of("PATH", "/bin"))
        .build();
  }

  @Test
  void eachPlaceholderQueuesBehindOursStillPendingInItsPartition() {
    List<SubmissionOrder.Sent> sent =
        IntStream.range(0, 4)
            .mapToObj(i -> order.submit(placeholder("p" + i, "inference"), slurm))
            .toList();
    assertThat(sent).extracting(SubmissionOrder.Sent::step).containsExactly(0, 1, 2, 3);
    // what Slurm was sent: the first at its policy's priority, each next one more nice
    assertThat(slurm.submissions()).extracting(s -> s.nice().orElse(0)).containsExactly(0, 1, 2, 3);
    // another partition is its own queue
    assertThat(order.submit(placeholder("q", "critical"), slurm).step()).isZero();
  }

  @Test
  void aStartedOrEndedPlaceholderNoLongerQueuesTheNextAndTheQueueEmptiesToItsHead() {
    long first = order.submit(placeholder("a", "inference"), slurm).jobId();
    long second = order.submit(placeholder("b", "inference"), slurm).jobId();
    slurm.allocate(first, List.of("n0"));
    SubmissionOrder.Sent third = order.submit(placeholder("c", "inference"), slurm);
    assertThat(third.step()).as("behind b, which still pends").isEqualTo(2);
    slurm.allocate(second, List.of("n0"));
    slurm.end(third.jobId(), JobState.CANCELLED);
    assertThat(order.submit(placeholder("d", "inference"), slurm).step()).isZero();
  }

  @Test
  void aJobSlurmNeverShowsStopsCountingAfterAMinute() {
    SubmissionOrder blind = new SubmissionOrder(id -> Optional.empty(), clock);
    blind.submit(placeholder("a", "inference"), slurm);
    assertThat(blind.submit(placeholder("b", "inference"), slurm).step()).isEqualTo(1);
    clock.advance(SubmissionOrder.UNSEEN.plus(Duration.ofSeconds(1)));
    assertThat(blind.submit(placeholder("c", "inference"), slurm).step()).isZero();
    assertThat(blind.pending()).isEqualTo(1);
  }

  @Test
  void anExplicitPriorityIsLoweredInsteadOfNiceAndNeverBelowOne() {
    JobSubmission s =
        JobSubmission.builder(new PlaceholderTag("ns", "x", "uid-x"))
            .priority(5)
            .workingDirectory("/tmp")
            .environment(java.util.Map.of("PATH", "/bin"))
            .build();
    assertThat(s.behind(2).priority().getAsLong()).isEqualTo(3);
    assertThat(s.behind(2).nice()).isEmpty();
    assertThat(s.behind(9).priority().getAsLong()).isEqualTo(1);
    assertThat(s.behind(0)).isSameAs(s);
    assertThatThrownBy(() -> s.behind(-1)).hasMessageContaining("must not be negative");
  }

  @Test
  void concurrentSubmissionsToOnePartitionTakeDistinctStepsInTheOrderSlurmGetsThem()
      throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(8);
    try {
      List<Future<SubmissionOrder.Sent>> futures =
          IntStream.range(0, 32)
              .mapToObj(
                  i -> pool.submit(() -> order.submit(placeholder("p" + i, "inference"), slurm)))
              .toList();
      for (Future<SubmissionOrder.Sent> f : futures) {
        f.get(10, TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
    }
    // one at a time on the wire: Slurm got steps 0, 1, 2, ... in that order
    assertThat(slurm.submissions())
        .extracting(s -> s.nice().orElse(0))
        .containsExactlyElementsOf(IntStream.range(0, 32).boxed().toList());
  }
}
