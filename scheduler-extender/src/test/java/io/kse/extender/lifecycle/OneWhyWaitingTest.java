package io.kse.extender.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.kse.extender.filter.FilterService;
import io.kse.extender.filter.FilterVerdict;
import io.kse.extender.k8s.PodRef;
import io.kse.extender.wire.FilterRequest;
import io.kse.policy.WellKnown;
import io.kse.slurm.testing.FakeSlurmClient;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * One "why it waits": for each reason a pod waits, the condition it is given, what {@code /explain}
 * shows (what it was told) and kube-scheduler's filter answer say the same words. They once said a
 * group's problem two ways ("cannot be placed: P" and "cannot be placed as it is: P") and its
 * incompleteness in two different sentences.
 */
class OneWhyWaitingTest extends ReconcilerFixture {
  private final FilterService filter =
      new FilterService(
          cache, registry, nodeNames, p -> {}, lifecycle::placementOf, cache::allocationHinted);

  /** The condition the pod was last given, what /explain shows, and the filter's answer. */
  private void saysTheSameEverywhere(Pod p, WaitReason reason) {
    PodRef ref = PodRef.of(p);
    Recorded.Condition told =
        recorded.stream()
            .filter(r -> r instanceof Recorded.Condition c && c.pod().equals(ref) && !c.allocated())
            .map(r -> (Recorded.Condition) r)
            .reduce((a, b) -> b)
            .orElseThrow(() -> new AssertionError(ref + " was told nothing: " + actions));
    assertThat(told.reason()).isEqualTo(reason.reason());
    assertThat(lifecycle.toldWaiting(ref.uid()))
        .as("/explain shows what the pod was told")
        .contains(new WhyWaiting(reason, told.message()));
    FilterVerdict v =
        filter.filter(
            new FilterRequest(
                ref, "slurm-inference", Map.of(), List.of("gpu-node-1"), Map.of(), false));
    assertThat(v.passing()).isEmpty();
    assertThat(v.reason()).as("filter's words").isEqualTo("kse: " + told.message());
  }

  private Pod member(String name, String uid, int size, int index) {
    return pod(
        name,
        uid,
        Map.of(
            WellKnown.GROUP, "llm",
            WellKnown.GROUP_SIZE, Integer.toString(size),
            WellKnown.GROUP_INDEX, Integer.toString(index)));
  }

  @Test
  void aGroupThatCannotBePlacedAsItIs() {
    lifecycle.onPod(member("llm-0", "u0", 2, 0));
    Pod odd = member("llm-1", "u1", 2, 0); // index 0 twice
    lifecycle.onPod(odd);
    saysTheSameEverywhere(odd, WaitReason.GROUP_INVALID);
  }

  @Test
  void aGroupWhoseMembersDoNotAllExistYet() {
    Pod first = member("llm-0", "u0", 3, 0);
    lifecycle.onPod(first);
    clock.advance(Duration.ofMinutes(10)); // past the wait for the controller to make the rest
    lifecycle.reconcileAll();
    saysTheSameEverywhere(first, WaitReason.GROUP_INCOMPLETE);
  }

  @Test
  void aPlaceholderWaitingInSlurmsQueue() {
    Pod p = pod("llm-0", "uid-1", Map.of());
    long id = submitted(p);
    slurm.pend(id, "Resources");
    cache.pollOnce();
    clock.advance(PENDING_QUIET.plusSeconds(1)); // told once it has pended a while
    cache.pollOnce();
    lifecycle.reconcileAll();
    saysTheSameEverywhere(p, WaitReason.SLURM_PENDING);
  }

  @Test
  void aPlaceholderThatCouldNotBeSubmitted() {
    slurm.failWith(FakeSlurmClient.outage());
    Pod p = pod("llm-0", "uid-1", Map.of());
    lifecycle.onPod(p);
    saysTheSameEverywhere(p, WaitReason.SUBMIT_FAILED);
  }
}
