package io.kse.extender.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;

import io.kse.extender.k8s.PodRef;
import io.kse.extender.lifecycle.PlacementFacts.Member;
import io.kse.extender.lifecycle.PlacementFacts.PodStanding;
import io.kse.slurm.JobState;
import io.kse.slurm.SlurmJob;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The rules for a placement of several pods (a multi-node group's members share one job): the unit
 * the groups work builds on. Single pods are the one-member case, covered by {@code
 * PlacementReconcilerTest} through the whole reconciler.
 */
class PlacementRulesTest {
  final PlacementRules rules = new PlacementRules(n -> n);
  static final PodRef LEADER = new PodRef("serving", "g-0", "u0");
  static final PodRef WORKER = new PodRef("serving", "g-1", "u1");

  static SlurmJob job(JobState state, List<String> nodes) {
    return new SlurmJob(
        7,
        "kse-serving-g",
        "",
        state,
        state == JobState.PENDING ? "Resources" : "None",
        "inference",
        "",
        nodes,
        2,
        Instant.EPOCH,
        Optional.of(Instant.EPOCH),
        Optional.empty(),
        state == JobState.PENDING ? 1 : 0,
        "gres:gpu:h100:8",
        "",
        1,
        Instant.EPOCH);
  }

  static Member member(PodRef ref, PodStanding s, String node, int index) {
    return new Member(ref, s, node, index, false);
  }

  static PlacementFacts facts(Optional<SlurmJob> job, Member... members) {
    return new PlacementFacts(
        List.of(members), job, Optional.empty(), Optional.empty(), Optional.empty(), false);
  }

  @Test
  void eachMemberIsWokenForItsOwnNodeOfTheAllocation() {
    List<Step> steps =
        rules.decide(
            facts(
                Optional.of(job(JobState.RUNNING, List.of("n0", "n1"))),
                member(LEADER, PodStanding.PENDING, "", 0),
                member(WORKER, PodStanding.PENDING, "", 1)));
    assertThat(steps)
        .containsExactly(new Step.Wake(LEADER, 7, "n0"), new Step.Wake(WORKER, 7, "n1"));
  }

  @Test
  void theJobLivesWhileAnyMemberNeedsItAndEndsWhenNoneDoes() {
    Optional<SlurmJob> running = Optional.of(job(JobState.RUNNING, List.of("n0", "n1")));
    assertThat(
            rules.decide(
                facts(
                    running,
                    member(LEADER, PodStanding.BOUND, "n0", 0),
                    member(WORKER, PodStanding.ABSENT, "", 1))))
        .as("a member recreated later goes back to its node of the running job")
        .isEmpty();
    assertThat(
            rules.decide(
                facts(
                    running,
                    member(LEADER, PodStanding.ABSENT, "", 0),
                    member(WORKER, PodStanding.TERMINAL, "", 1))))
        .containsExactly(new Step.Cancel(7, "pod deleted"));
  }

  @Test
  void whenTheJobLosesItsNodesEveryBoundMemberIsEvicted() {
    List<Step> steps =
        rules.decide(
            facts(
                Optional.of(job(JobState.PENDING, List.of())),
                member(LEADER, PodStanding.BOUND, "n0", 0),
                member(WORKER, PodStanding.BOUND, "n1", 1)));
    assertThat(steps)
        .containsExactly(
            new Step.Evict(LEADER, "Slurm job 7 was requeued (Resources)", 7),
            new Step.Evict(WORKER, "Slurm job 7 was requeued (Resources)", 7));
  }

  @Test
  void pendingMembersAreToldWhyTheyWait() {
    List<Step> steps =
        rules.decide(
            facts(
                Optional.of(job(JobState.PENDING, List.of())),
                member(LEADER, PodStanding.PENDING, "", 0),
                member(WORKER, PodStanding.PENDING, "", 1)));
    assertThat(steps)
        .containsExactly(
            new Step.Waiting(LEADER, "SlurmPending", "waiting for Slurm job 7 (Resources)"),
            new Step.Waiting(WORKER, "SlurmPending", "waiting for Slurm job 7 (Resources)"));
  }

  @Test
  void aPlacementWithoutAJobGetsOneSubmissionNotOnePerMember() {
    assertThat(
            rules.decide(
                facts(
                    Optional.empty(),
                    member(LEADER, PodStanding.PENDING, "", 0),
                    member(WORKER, PodStanding.PENDING, "", 1))))
        .containsExactly(new Step.Submit("no placeholder yet"));
  }
}
