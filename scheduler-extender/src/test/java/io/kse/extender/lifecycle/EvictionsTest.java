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
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Evictions on their own: one attempt at a time, backoff on a PDB refusal, the override. */
class EvictionsTest {
  final MutableClock clock = new MutableClock(Instant.parse("2026-11-25T12:00:00Z"));
  final List<String> calls = new ArrayList<>();
  PodActions.EvictResult answer = PodActions.EvictResult.BLOCKED_BY_PDB;
  final PodActions actions =
      new PodActions() {
        @Override
        public void event(PodRef pod, EventReason reason, String message) {
          calls.add("event " + reason.reason());
        }

        @Override
        public EvictResult evict(PodRef pod, String reason) {
          calls.add("evict");
          return answer;
        }

        @Override
        public boolean delete(PodRef pod, String reason) {
          calls.add("delete");
          return true;
        }

        @Override
        public boolean wake(PodRef pod, String node, long jobId, boolean gated) {
          return true;
        }

        @Override
        public void ungate(PodRef pod) {}

        @Override
        public void condition(PodRef pod, boolean allocated, String reason, String message) {}
      };
  final Evictions evictions =
      new Evictions(
          actions, new ExtenderMetrics(new SimpleMeterRegistry()), clock, Duration.ofSeconds(60));
  final PodRef pod = new PodRef("serving", "llm-0", "u-1");

  void attempt() {
    if (evictions.claim("u-1")) {
      evictions.run(pod, "Slurm job 7 ended", EventReason.JOB_ENDED);
    }
  }

  @Test
  void aRefusedEvictionIsRetriedWithBackoffAndThePodDeletedOnceTheOverrideIsDue() {
    attempt();
    assertThat(calls).containsExactly("event SlurmJobEnded", "evict", "event EvictionBlocked");
    calls.clear();
    attempt(); // the same instant: not due
    assertThat(calls).isEmpty();
    clock.advance(Duration.ofSeconds(1));
    attempt();
    assertThat(calls)
        .as("2nd attempt, said again (1st, 2nd, 4th…)")
        .containsExactly("evict", "event EvictionBlocked");
    calls.clear();
    clock.advance(Duration.ofSeconds(1));
    attempt();
    assertThat(calls).as("not due yet: the backoff doubled").isEmpty();
    clock.advance(Duration.ofSeconds(60));
    attempt();
    assertThat(calls).containsExactly("evict", "event EvictionBlocked", "delete");
  }

  @Test
  void anAcceptedEvictionIsAskedAgainOnlyAfterTheRecheckAndForgottenWhenThePodIsGone() {
    answer = PodActions.EvictResult.EVICTED;
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
    assertThat(calls).as("a new first attempt: said once more").startsWith("event SlurmJobEnded");
  }

  @Test
  void oneAttemptAtATime() {
    assertThat(evictions.claim("u-1")).isTrue();
    assertThat(evictions.claim("u-1")).as("the first is still in flight").isFalse();
  }
}
