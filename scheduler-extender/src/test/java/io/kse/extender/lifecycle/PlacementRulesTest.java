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
    return job(state, state == JobState.PENDING ? "Resources" : "None", nodes);
  }

  static SlurmJob job(JobState state, String reason, List<String> nodes) {
    return job(state, reason, nodes, 1);
  }

  static SlurmJob job(JobState state, String reason, List<String> nodes, long priority) {
    return new SlurmJob(
        7,
        "kse-serving-g",
        "",
        state,
        reason,
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
        priority,
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
  void aStateThatCannotBeReadNeitherEvictsNorCancels() {
    assertThat(
            rules.decide(
                facts(
                    Optional.of(job(JobState.UNKNOWN, List.of("n0", "n1"))),
                    member(LEADER, PodStanding.BOUND, "n0", 0),
                    member(WORKER, PodStanding.BOUND, "n1", 1))))
        .isEmpty();
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

  /**
   * A node's failure requeues its job (Slurm's default JobRequeue=1) with reason None on 22.05 to
   * 26.05 (JobEndIT): the pod is told of the node, in Slurm's words, and no "(None)".
   */
  @Test
  void aMemberWhoseNodeFailedIsToldOfTheNode() {
    PlacementFacts f =
        facts(
            Optional.of(job(JobState.PENDING, "None", List.of())),
            member(LEADER, PodStanding.BOUND, "n0", 0),
            member(WORKER, PodStanding.BOUND, "n1", 1));
    PlacementFacts n0Down =
        new PlacementFacts(
            f.members(),
            f.size(),
            f.group(),
            f.incompleteOverdue(),
            f.job(),
            f.own(),
            f.submittedNotSeen(),
            f.unusableNode(),
            f.retryDue(),
            f.duplicates(),
            java.util.Map.of("n0", "n0 is down in Slurm (Not responding)"),
            f.queuedBehind());
    assertThat(rules.decide(n0Down))
        .containsExactly(
            new Step.Evict(
                LEADER, "Slurm job 7 was requeued: n0 is down in Slurm (Not responding)", 7),
            new Step.Evict(WORKER, "Slurm job 7 was requeued", 7));
  }

  /**
   * Slurm → pod: a placeholder Slurm chose for preemption still holds the node within its grace
   * time; the bound pod is evicted and the job is NOT cancelled until the pod is gone.
   */
  @Test
  void aPreemptedPlaceholderHoldsItsNodesUntilItsPodsAreGone() {
    Instant at = Instant.parse("2026-11-24T10:00:00Z");
    Optional<SlurmJob> preempting =
        Optional.of(
            io.kse.slurm.testing.FakeSlurmClient.preemptedAt(
                job(JobState.RUNNING, List.of("n0", "n1")), at));
    List<Step> steps =
        rules.decide(
            facts(
                preempting,
                member(LEADER, PodStanding.BOUND, "n0", 0),
                member(WORKER, PodStanding.TERMINATING, "n1", 1)));
    assertThat(steps)
        .containsExactly(
            new Step.Evict(
                LEADER,
                "Slurm chose job 7 for preemption at 2026-11-24T10:00:00Z; it holds n0 until this"
                    + " pod has stopped",
                0,
                io.kse.extender.k8s.EventReason.PREEMPTING));
    assertThat(
            rules.decide(
                facts(
                    preempting,
                    member(LEADER, PodStanding.TERMINATING, "n0", 0),
                    member(WORKER, PodStanding.TERMINATING, "n1", 1))))
        .as("while any member's containers may run, the job holds")
        .isEmpty();
    assertThat(
            rules.decide(
                facts(
                    preempting,
                    member(LEADER, PodStanding.ABSENT, "", 0),
                    member(WORKER, PodStanding.TERMINAL, "", 1))))
        .as("once every member is gone, the job is released")
        .containsExactly(new Step.Cancel(7, "pod deleted"));
  }

  @Test
  void aPreemptedPlaceholderNobodyRunsOnIsReplacedAndNotWokenFor() {
    Optional<SlurmJob> preempting =
        Optional.of(
            io.kse.slurm.testing.FakeSlurmClient.preemptedAt(
                job(JobState.RUNNING, List.of("n0", "n1")), Instant.EPOCH));
    assertThat(
            rules.decide(
                facts(
                    preempting,
                    member(LEADER, PodStanding.PENDING, "", 0),
                    member(WORKER, PodStanding.PENDING, "", 1))))
        .containsExactly(new Step.Replace(7, "Slurm chose it for preemption"));
    assertThat(
            rules.decide(
                facts(
                    preempting,
                    member(LEADER, PodStanding.TERMINATING, "n0", 0),
                    member(WORKER, PodStanding.PENDING, "", 1))))
        .as("a recreated member is not sent to a node about to be taken")
        .containsExactly(
            new Step.Waiting(
                WORKER,
                WaitReason.SLURM_PREEMPTING,
                "Slurm job 7 is being preempted; a new placeholder follows once the running"
                    + " members have stopped"));
  }

  /** pod → Slurm: a pod stuck Terminating keeps its job, and users are told (never released). */
  @Test
  void aPodStuckTerminatingKeepsItsJobAndIsReported() {
    Optional<SlurmJob> running = Optional.of(job(JobState.RUNNING, List.of("n0", "n1")));
    assertThat(
            rules.decide(
                facts(
                    running,
                    new Member(LEADER, PodStanding.TERMINATING, "n0", 0, false, true),
                    member(WORKER, PodStanding.ABSENT, "", 1))))
        .containsExactly(new Step.HeldForTerminating(LEADER, 7, "n0"));
    assertThat(
            rules.decide(
                facts(
                    running,
                    member(LEADER, PodStanding.TERMINATING, "n0", 0),
                    member(WORKER, PodStanding.ABSENT, "", 1))))
        .as("within its deadline, nothing to say")
        .isEmpty();
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
            new Step.Waiting(
                LEADER, WaitReason.SLURM_PENDING, "waiting for Slurm job 7 (Resources)"),
            new Step.Waiting(
                WORKER, WaitReason.SLURM_PENDING, "waiting for Slurm job 7 (Resources)"));
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

  /** Issue 60: job 7 pending (held or not), behind {@code leader} (0 for none). */
  PlacementFacts queued(boolean held, long leader) {
    SlurmJob j =
        held
            ? job(JobState.PENDING, "JobHeldUser", List.of(), 0)
            : job(JobState.PENDING, List.of());
    return facts(Optional.of(j), member(LEADER, PodStanding.PENDING, "", 0))
        .withQueuedBehind(
            leader == 0 ? java.util.OptionalLong.empty() : java.util.OptionalLong.of(leader));
  }

  @Test
  void aHeldPlaceholderWaitsBehindItsLeaderAndIsReleasedOnceThereIsNone() {
    assertThat(rules.decide(queued(true, 5)))
        .singleElement()
        .satisfies(
            s -> {
              assertThat(s).isInstanceOf(Step.Waiting.class);
              assertThat(((Step.Waiting) s).reason()).isEqualTo(WaitReason.QUEUED_BEHIND);
              assertThat(((Step.Waiting) s).message()).contains("held behind placeholder job 5");
            });
    assertThat(rules.decide(queued(true, 0))).first().isEqualTo(new Step.Queue(7, 0));
  }

  @Test
  void ofTwoPendingUnheldTheYoungerIsHeldBehindTheOlder() {
    assertThat(rules.decide(queued(false, 5))).first().isEqualTo(new Step.Queue(7, 5));
    // the older one of the two stays as it is: Slurm's own reason
    assertThat(rules.decide(queued(false, 9)))
        .singleElement()
        .satisfies(
            s -> assertThat(((Step.Waiting) s).reason()).isEqualTo(WaitReason.SLURM_PENDING));
    assertThat(rules.decide(queued(false, 0)))
        .singleElement()
        .satisfies(
            s -> assertThat(((Step.Waiting) s).reason()).isEqualTo(WaitReason.SLURM_PENDING));
  }
}
