package io.kse.slurm;

import static org.assertj.core.api.Assertions.assertThat;

import io.kse.slurm.cache.Snapshot;
import io.kse.slurm.testing.FakeSlurmClient;
import io.kse.slurm.testing.MutableClock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class SubmissionOrderTest {
  final MutableClock clock = new MutableClock(Instant.parse("2026-12-08T00:00:00Z"));
  final FakeSlurmClient slurm = new FakeSlurmClient(clock, "n0");

  /** What the cache would show: every job the fake holds (seen = true) or none of them. */
  boolean seen = true;

  final SubmissionOrder order =
      new SubmissionOrder(
          () ->
              new Snapshot(
                  seen
                      ? slurm.allJobs(j -> true).stream()
                          .collect(Collectors.toMap(SlurmJob::id, Function.identity()))
                      : Map.of(),
                  Map.of(),
                  Map.of(),
                  Map.of(),
                  clock.instant()),
          clock);

  static JobSubmission placeholder(String name, String partition) {
    return JobSubmission.builder(new PlaceholderTag("ns", name, "uid-" + name))
        .partition(partition)
        .gresPerNode("gpu:h100:1")
        .workingDirectory("/tmp")
        .environment(Map.of("PATH", "/bin"))
        .build();
  }

  SubmissionOrder.Sent submit(String name) {
    return order.submit(placeholder(name, "inference"), slurm);
  }

  @Test
  void whileOneOfOursPendsInItsPartitionTheNextGoInHeldBehindIt() {
    long lead = submit("a").jobId();
    SubmissionOrder.Sent b = submit("b");
    SubmissionOrder.Sent c = submit("c");
    assertThat(b.heldBehind()).hasValue(lead);
    assertThat(c.heldBehind()).hasValue(lead);
    assertThat(slurm.submissions())
        .extracting(JobSubmission::hold)
        .containsExactly(false, true, true);
    // another partition is its own queue
    assertThat(order.submit(placeholder("q", "critical"), slurm).heldBehind()).isEmpty();
  }

  @Test
  void theHeldOnesHaveNoLeaderOnceItStartsOrEnds() {
    long lead = submit("a").jobId();
    long held = submit("b").jobId();
    assertThat(order.leader("inference", held)).hasValue(lead);
    slurm.allocate(lead, List.of("n0"));
    assertThat(order.leader("inference", held)).isEmpty();
    // released, then pending beside a younger one released with it: the younger one is behind it
    slurm.update(held, JobUpdate.release());
    long younger = submit("c").jobId();
    slurm.update(younger, JobUpdate.release());
    assertThat(order.leader("inference", younger)).hasValue(held);
    // each sees the other; the reconciler holds only the one with an older leader (the younger)
    assertThat(order.leader("inference", held)).hasValue(younger);
    slurm.end(held, JobState.CANCELLED);
    assertThat(order.leader("inference", younger)).isEmpty();
  }

  @Test
  void aSubmissionSlurmHasNotShownYetLeadsAndOneNeverShownStopsLeadingAfterAMinute() {
    seen = false;
    long lead = submit("a").jobId();
    assertThat(submit("b").heldBehind()).hasValue(lead);
    clock.advance(SubmissionOrder.UNSEEN.plus(Duration.ofSeconds(1)));
    assertThat(submit("c").heldBehind()).isEmpty();
  }

  @Test
  void aLeaderPendingLongerThanItsWaitNoLongerHoldsTheOthersBack() {
    long lead = submit("a").jobId();
    long held = submit("b").jobId();
    assertThat(order.leader("inference", held)).hasValue(lead);
    clock.advance(SubmissionOrder.LEADER_WAIT.plusSeconds(1));
    assertThat(order.leader("inference", held)).isEmpty();
  }

  @Test
  void heldMeansPendingWithAHoldReasonAndNoPriority() {
    long id = submit("a").jobId();
    long h = submit("b").jobId();
    assertThat(SubmissionOrder.held(slurm.job(h).orElseThrow())).isTrue();
    assertThat(SubmissionOrder.held(slurm.job(id).orElseThrow())).isFalse();
    slurm.allocate(h, List.of("n0"));
    assertThat(SubmissionOrder.held(slurm.job(h).orElseThrow())).isFalse();
  }

  @Test
  void concurrentSubmissionsToOnePartitionLeaveExactlyOneUnheld() throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(8);
    try {
      List<Future<SubmissionOrder.Sent>> futures =
          IntStream.range(0, 32).mapToObj(i -> pool.submit(() -> submit("p" + i))).toList();
      for (Future<SubmissionOrder.Sent> f : futures) {
        f.get(10, TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
    }
    assertThat(slurm.submissions()).filteredOn(s -> !s.hold()).hasSize(1);
    assertThat(order.leader("inference", 0)).isEqualTo(OptionalLong.of(100));
  }

  @Test
  void aPlaceholderWhoseTierMayPreemptNothingNeitherWaitsNorHoldsOthersBack() {
    // the extender's predicate: a job of a tier that may preempt nothing (here: named free-*)
    SubmissionOrder judged =
        new SubmissionOrder(
            () ->
                new Snapshot(
                    slurm.allJobs(j -> true).stream()
                        .collect(Collectors.toMap(SlurmJob::id, Function.identity())),
                    Map.of(),
                    Map.of(),
                    Map.of(),
                    clock.instant()),
            j -> !j.name().contains("free"),
            clock);
    SubmissionOrder.Sent free = judged.submit(placeholder("free-a", "inference"), slurm, false);
    assertThat(free.heldBehind()).isEmpty();
    SubmissionOrder.Sent lead = judged.submit(placeholder("b", "inference"), slurm);
    assertThat(lead.heldBehind()).as("nothing that may preempt ahead").isEmpty();
    assertThat(judged.submit(placeholder("free-c", "inference"), slurm, false).heldBehind())
        .as("sent at once behind a leader")
        .isEmpty();
    assertThat(judged.submit(placeholder("d", "inference"), slurm).heldBehind())
        .hasValue(lead.jobId());
    assertThat(judged.leader("inference", lead.jobId())).as("free-a leads nobody").isEmpty();
  }

  @Test
  void aReleaseGivesBackTheExplicitPrioritySlurmForgotOnHold() {
    JobSubmission withPriority =
        JobSubmission.builder(new PlaceholderTag("ns", "p", "uid-p"))
            .partition("inference")
            .priority(12345)
            .workingDirectory("/tmp")
            .environment(Map.of("PATH", "/bin"))
            .build();
    submit("a");
    long held = order.submit(withPriority, slurm).jobId();
    assertThat(order.release(held).priority()).hasValue(12345);
    assertThat(order.release(held).hold()).isEmpty();
    long plain = submit("b").jobId();
    assertThat(order.release(plain)).isEqualTo(JobUpdate.release());
  }
}
