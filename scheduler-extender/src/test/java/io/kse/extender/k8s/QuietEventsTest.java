package io.kse.extender.k8s;

import static org.assertj.core.api.Assertions.assertThat;

import io.kse.slurm.testing.MutableClock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Issue 30: a pod bound quickly gets one Event; a pod that waits hears each step, in order. */
class QuietEventsTest {
  static final Instant T0 = Instant.parse("2026-11-26T12:00:00Z");
  final MutableClock clock = new MutableClock(T0);
  final List<String> posted = new ArrayList<>();
  final PodActions api =
      new PodActions() {
        @Override
        public void event(PodRef pod, EventReason reason, String message) {
          event(pod, reason, message, clock.instant());
        }

        @Override
        public void event(PodRef pod, EventReason reason, String message, Instant at) {
          posted.add(
              pod.name()
                  + " "
                  + reason.reason()
                  + " @"
                  + Duration.between(T0, at).toMillis()
                  + ": "
                  + message);
        }

        @Override
        public boolean wake(PodRef pod, String node, long jobId, WakeUp how) {
          return true;
        }

        @Override
        public void ungate(PodRef pod) {}

        @Override
        public EvictResult evict(PodRef pod, String reason) {
          return EvictResult.EVICTED;
        }

        @Override
        public boolean delete(PodRef pod, String reason) {
          return true;
        }

        @Override
        public void condition(PodRef pod, boolean allocated, String reason, String message) {}
      };
  final QuietEvents events = new QuietEvents(api, clock, Duration.ofSeconds(5));
  final PodRef a = new PodRef("ns", "a", "uid-a");
  final PodRef b = new PodRef("ns", "b", "uid-b");

  @Test
  void aPodBoundWithinTheQuietPeriodGetsOneEventSayingAllThree() {
    events.event(a, EventReason.SUBMITTED, "placeholder submitted as Slurm job 7 (tier t)");
    clock.advance(Duration.ofMillis(800));
    events.event(a, EventReason.ALLOCATED, "Slurm job 7 allocated node n1");
    clock.advance(Duration.ofMillis(300));
    events.flush();
    assertThat(posted).isEmpty();
    events.event(a, EventReason.BOUND, "bound to n1, allocated by Slurm job 7");
    events.flush();
    clock.advance(Duration.ofSeconds(10));
    events.flush();
    assertThat(posted)
        .containsExactly(
            "a BoundToSlurmNode @1100: bound to n1, allocated by Slurm job 7; placeholder"
                + " submitted as Slurm job 7 (tier t); Slurm job 7 allocated node n1");
    assertThat(events.held()).isZero();
  }

  @Test
  void aPodThatWaitsHearsEachStepWhenItsQuietPeriodEndsStampedWhenItHappened() {
    events.event(a, EventReason.SUBMITTED, "submitted");
    events.event(b, EventReason.SUBMITTED, "submitted");
    clock.advance(Duration.ofMillis(29_999)); // held six quiet periods for an Event to say it
    events.flush();
    assertThat(posted).isEmpty();
    clock.advance(Duration.ofMillis(1));
    events.flush();
    assertThat(posted)
        .containsExactly("a SlurmJobSubmitted @0: submitted", "b SlurmJobSubmitted @0: submitted");
    // allocated a minute later, bound 29 s on (a burst on busy cores): still one Event
    clock.advance(Duration.ofMinutes(1));
    events.event(a, EventReason.ALLOCATED, "allocated n2");
    clock.advance(Duration.ofMillis(29_000));
    events.flush();
    assertThat(posted).hasSize(2);
    events.event(a, EventReason.BOUND, "bound to n2");
    assertThat(posted).last().isEqualTo("a BoundToSlurmNode @119000: bound to n2; allocated n2");
  }

  /** A wake retried says the allocation again: held once, said once with the binding. */
  @Test
  void theSameStepSaidTwiceIsHeldOnce() {
    events.event(a, EventReason.ALLOCATED, "Slurm job 7 allocated node n1");
    events.event(a, EventReason.ALLOCATED, "Slurm job 7 allocated node n1");
    assertThat(events.held()).isEqualTo(1);
    events.event(a, EventReason.BOUND, "bound to n1");
    assertThat(posted)
        .containsExactly("a BoundToSlurmNode @0: bound to n1; Slurm job 7 allocated node n1");
  }

  /** Issue 47: a pod of a burst told it waits costs one Event for both, not two. */
  @Test
  void aPodToldItWaitsGetsOneEventThatAlsoSaysItsSubmission() {
    events.event(a, EventReason.SUBMITTED, "placeholder submitted as Slurm job 7");
    clock.advance(Duration.ofMillis(5_600)); // pending past the quiet period, read again
    events.flush();
    events.event(a, EventReason.WAITING, "waiting for Slurm job 7 (Resources)");
    assertThat(posted)
        .containsExactly(
            "a WaitingForSlurm @5600: waiting for Slurm job 7 (Resources); placeholder submitted"
                + " as Slurm job 7");
    assertThat(events.held()).isZero();
  }

  @Test
  void anyOtherEventOfThePodFirstSaysWhatIsHeldSoNothingComesOutOfOrder() {
    events.event(a, EventReason.SUBMITTED, "submitted");
    clock.advance(Duration.ofSeconds(1));
    events.event(b, EventReason.SUBMITTED, "b submitted");
    events.event(a, EventReason.JOB_ENDED, "job 7 ended");
    assertThat(posted)
        .containsExactly("a SlurmJobSubmitted @0: submitted", "a SlurmJobEnded @1000: job 7 ended");
    assertThat(events.held()).as("b's stays held").isEqualTo(1);
    events.flushAll();
    assertThat(posted).last().isEqualTo("b SlurmJobSubmitted @1000: b submitted");
  }

  @Test
  void aQuietPeriodOfZeroPostsEachAtOnce() {
    QuietEvents none = new QuietEvents(api, clock, Duration.ZERO);
    none.event(a, EventReason.SUBMITTED, "submitted");
    none.event(a, EventReason.BOUND, "bound");
    assertThat(posted)
        .containsExactly("a SlurmJobSubmitted @0: submitted", "a BoundToSlurmNode @0: bound");
  }
}
