package io.kse.extender.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;

import io.kse.extender.k8s.EventReason;
import io.kse.extender.k8s.PodActions;
import io.kse.extender.k8s.PodRef;
import io.kse.extender.metrics.ExtenderMetrics;
import io.kse.slurm.testing.MutableClock;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Evictions on their own: one attempt at a time, backoff on a PDB refusal, the override. */
class EvictionsTest {
  final MutableClock clock = new MutableClock(Instant.parse("2026-11-25T12:00:00Z"));
  final RecordingPodActions actions = new RecordingPodActions();
  final List<String> calls = actions.calls;

  {
    actions.evictAnswer = PodActions.EvictResult.BLOCKED_BY_PDB;
  }

  final Evictions evictions =
      new Evictions(
          actions, new ExtenderMetrics(new SimpleMeterRegistry()), clock, Duration.ofSeconds(60));
  final PodRef pod = new PodRef("serving", "llm-0", "u-1");

  /** The calls without their messages. */
  List<String> kinds() {
    return calls.stream().map(c -> c.contains(":") ? c.substring(0, c.indexOf(':')) : c).toList();
  }

  void attempt() {
    if (evictions.claim("u-1")) {
      evictions.run(pod, "Slurm job 7 ended", EventReason.JOB_ENDED);
    }
  }

  @Test
  void aRefusedEvictionIsRetriedWithBackoffAndThePodDeletedOnceTheOverrideIsDue() {
    attempt();
    assertThat(kinds()).containsExactly("event SlurmJobEnded", "evict", "event EvictionBlocked");
    calls.clear();
    attempt(); // the same instant: not due
    assertThat(calls).isEmpty();
    clock.advance(Duration.ofSeconds(1));
    attempt();
    assertThat(kinds())
        .as("2nd attempt, said again (1st, 2nd, 4th…)")
        .containsExactly("evict", "event EvictionBlocked");
    calls.clear();
    clock.advance(Duration.ofSeconds(1));
    attempt();
    assertThat(calls).as("not due yet: the backoff doubled").isEmpty();
    clock.advance(Duration.ofSeconds(60));
    attempt();
    assertThat(kinds()).containsExactly("evict", "event EvictionBlocked", "delete");
  }

  @Test
  void anAcceptedEvictionIsAskedAgainOnlyAfterTheRecheckAndForgottenWhenThePodIsGone() {
    actions.evictAnswer = PodActions.EvictResult.EVICTED;
    attempt();
    calls.clear();
    clock.advance(Evictions.RECHECK.minusSeconds(1));
    attempt();
    assertThat(calls).isEmpty();
    clock.advance(Duration.ofSeconds(1));
    attempt();
    assertThat(calls).containsExactly("evict");
    evictions.forget("u-1");
    calls.clear();
    attempt();
    assertThat(calls)
        .as("a new first attempt: said once more")
        .startsWith("event SlurmJobEnded: Slurm job 7 ended; evicting the pod");
  }

  @Test
  void oneAttemptAtATime() {
    assertThat(evictions.claim("u-1")).isTrue();
    assertThat(evictions.claim("u-1")).as("the first is still in flight").isFalse();
  }
}
