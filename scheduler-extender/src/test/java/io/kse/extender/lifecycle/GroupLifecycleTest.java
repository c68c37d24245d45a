package io.kse.extender.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.kse.extender.k8s.PodRef;
import io.kse.policy.WellKnown;
import io.kse.slurm.JobState;
import io.kse.slurm.JobSubmission;
import io.kse.slurm.PlaceholderTag;
import io.kse.slurm.SlurmJob;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Multi-node groups: one job for all members, member i on the job's i-th node. */
class GroupLifecycleTest extends ReconcilerFixture {
  /** Multi-node groups: one job for all members, member i on the job's i-th node. */
  static final String GROUP_KEY = "group:serving/kse/llm";

  Pod member(String name, String uid, int index) {
    return pod(
        name,
        uid,
        Map.of(
            WellKnown.GROUP, "llm",
            WellKnown.GROUP_SIZE, "3",
            WellKnown.GROUP_INDEX, Integer.toString(index)));
  }

  Pod bind(Pod p, String node) {
    Pod b =
        new io.fabric8.kubernetes.api.model.PodBuilder(p)
            .editSpec()
            .withNodeName(node)
            .endSpec()
            .build();
    pods.put("serving/" + p.getMetadata().getName(), b);
    return b;
  }

  void delete(Pod p) {
    pods.remove("serving/" + p.getMetadata().getName());
    lifecycle.onPodDeleted(p);
  }

  long jobId() {
    return ((PlaceholderState.Submitted) registry.get(GROUP_KEY).orElseThrow()).jobId();
  }

  @Test
  void oneJobForTheWholeGroupSubmittedOnlyOnceEveryMemberExists() {
    lifecycle.onPod(member("llm-0", "u0", 0));
    lifecycle.onPod(member("llm-1", "u1", 1));
    assertThat(slurm.submissions()).as("2 of 3 members").isEmpty();
    lifecycle.onPod(member("llm-2", "u2", 2));
    assertThat(slurm.submissions()).hasSize(1);
    JobSubmission s = slurm.submissions().get(0);
    assertThat(s.nodes()).isEqualTo(3);
    assertThat(s.gresPerNode()).contains("gpu:h100:4");
    assertThat(s.tag().key()).isEqualTo(GROUP_KEY);
    assertThat(s.tag().name()).as("the leader").isEqualTo("llm-0");
    lifecycle.reconcileAll();
    assertThat(slurm.submissions()).hasSize(1);
  }

  @Test
  void noMemberIsWokenBeforeTheWholeJobIsAllocatedThenEachGoesToItsOwnNode() {
    lifecycle.onPod(member("llm-2", "u2", 2));
    lifecycle.onPod(member("llm-0", "u0", 0));
    lifecycle.onPod(member("llm-1", "u1", 1));
    long id = jobId();
    cache.pollOnce();
    assertThat(recorded(Recorded.Wake.class)).isEmpty();
    slurm.allocate(id, List.of("gpu-node-3", "gpu-node-1", "gpu-node-2"));
    cache.pollOnce();
    assertThat(actions)
        .contains(
            "wake serving/llm-0 -> gpu-node-3",
            "wake serving/llm-1 -> gpu-node-1",
            "wake serving/llm-2 -> gpu-node-2");
  }

  @Test
  void anIncompleteGroupHoldsNoJobAndIsToldSoOnlyAfterTheWait() {
    lifecycle.onPod(member("llm-0", "u0", 0));
    lifecycle.onPod(member("llm-1", "u1", 1));
    assertThat(actions).isEmpty();
    clock.advance(GROUP_WAIT.plusSeconds(1));
    lifecycle.reconcileAll();
    assertThat(slurm.submissions()).isEmpty();
    assertThat(actions)
        .contains(
            "event WaitingForSlurm: group kse/llm has 2 of its 3 members; its Slurm placeholder is"
                + " submitted once all exist, and holds no node until then");
  }

  @Test
  void aRecreatedMemberGoesBackToItsNodeOfTheStillRunningJob() {
    Pod l = member("llm-0", "u0", 0);
    Pod w1 = member("llm-1", "u1", 1);
    Pod w2 = member("llm-2", "u2", 2);
    List.of(l, w1, w2).forEach(lifecycle::onPod);
    long id = jobId();
    slurm.allocate(id, List.of("gpu-node-1", "gpu-node-2", "gpu-node-3"));
    cache.pollOnce();
    bind(l, "gpu-node-1");
    bind(w1, "gpu-node-2");
    bind(w2, "gpu-node-3");
    lifecycle.reconcileAll();
    delete(w1);
    assertThat(slurm.job(id).map(SlurmJob::state))
        .as("other members live")
        .contains(JobState.RUNNING);
    clearRecorded();
    lifecycle.onPod(member("llm-1", "u1-new", 1));
    assertThat(actions).contains("wake serving/llm-1 -> gpu-node-2");
    assertThat(slurm.submissions()).hasSize(1);
  }

  /** A member of group {@code llm} of {@code size}, indexed by name, asking {@code gpus}. */
  Pod byName(String name, String uid, int size, int gpus) {
    Pod p =
        io.kse.extender.testing.Pods.pending(
                name, 3, gpus, Map.of(WellKnown.GROUP, "llm", WellKnown.GROUP_SIZE, "" + size))
            .editMetadata()
            .withUid(uid)
            .withCreationTimestamp(Instant.now().minusSeconds(2).toString())
            .endMetadata()
            .build();
    pods.put("serving/" + name, p);
    lifecycle.onPod(p);
    return p;
  }

  String nodeOf(Pod p, long job) {
    PodRef ref = PodRef.of(p);
    return lifecycle.placementOf(ref).nodeOf(ref, cache.job(job).orElseThrow()).orElse("none");
  }

  /** Issue 26 #2: a member's index is its for the life of the job, whoever else goes. */
  @Test
  void aMemberIndexedByNameKeepsItsNodeWhenAnotherIsDeletedAndTheNewcomerGetsTheFreeOne() {
    Pod m0 = byName("llm-a", "u0", 4, 4);
    Pod m1 = byName("llm-b", "u1", 4, 4);
    Pod m2 = byName("llm-c", "u2", 4, 4);
    Pod m3 = byName("llm-d", "u3", 4, 4);
    long id = jobId();
    slurm.allocate(id, List.of("gpu-node-1", "gpu-node-2", "gpu-node-3", "gpu-node-4"));
    cache.pollOnce();
    assertThat(actions).contains("wake serving/llm-c -> gpu-node-3");
    // one member deleted before any bind: the others keep the nodes they were sent to
    delete(m1);
    assertThat(List.of(nodeOf(m0, id), nodeOf(m2, id), nodeOf(m3, id)))
        .containsExactly("gpu-node-1", "gpu-node-3", "gpu-node-4");
    bind(m2, "gpu-node-3");
    clearRecorded();
    Pod again = byName("llm-e", "u4", 4, 4);
    assertThat(actions).contains("wake serving/llm-e -> gpu-node-2");
    assertThat(nodeOf(again, id)).isEqualTo("gpu-node-2");
    assertThat(nodeOf(m3, id)).isEqualTo("gpu-node-4");
    assertThat(slurm.submissions()).hasSize(1);
  }

  /** Issue 26 #1: never bound on fewer GPUs than it asks. */
  @Test
  void aMemberRecreatedAskingMoreGpusWaitsWhileOthersRunThenTheJobIsReplaced() {
    Pod a = byName("llm-a", "u0", 2, 4);
    Pod b = byName("llm-b", "u1", 2, 4);
    long id = jobId();
    slurm.allocate(id, List.of("gpu-node-1", "gpu-node-2"));
    cache.pollOnce();
    bind(a, "gpu-node-1");
    bind(b, "gpu-node-2");
    delete(b);
    clearRecorded();
    Pod bigger = byName("llm-b", "u1-new", 2, 8);
    assertThat(nodeOf(bigger, id)).as("the job holds 4 GPUs per node").isEqualTo("none");
    assertThat(recorded(Recorded.Wake.class)).isEmpty();
    assertThat(actions)
        .contains(
            "condition false ShapeChanged: pod llm-b asks 8 GPUs per node, and Slurm job "
                + id
                + " holds 4 on each of its nodes; a placeholder of the new shape follows once"
                + " the running members have stopped");
    assertThat(slurm.job(id).map(SlurmJob::state)).contains(JobState.RUNNING);
    // the running member goes too (its controller recreates the group): the job is replaced
    delete(a);
    byName("llm-a", "u0-new", 2, 8);
    assertThat(slurm.job(id).map(SlurmJob::state)).contains(JobState.CANCELLED);
    assertThat(actions).anyMatch(x -> x.startsWith("event PlacementShapeChanged: pod llm-"));
    cache.pollOnce();
    assertThat(slurm.submissions()).hasSize(2);
    assertThat(slurm.submissions().get(1).gresPerNode()).contains("gpu:h100:8");
    assertThat(slurm.submissions().get(1).nodes()).isEqualTo(2);
  }

  /** Issue 26 #3: a job of a shape that no longer stands never runs for nobody. */
  @Test
  void aGroupMadeInvalidWhileItsJobPendsHasTheJobCancelledAndGetsOneOfItsNewShape() {
    Pod a = byName("llm-a", "u0", 3, 4);
    byName("llm-b", "u1", 3, 4);
    byName("llm-c", "u2", 3, 4);
    long id = jobId();
    cache.pollOnce();
    byName("llm-b", "u1", 2, 4); // one member's size changed: the members disagree
    assertThat(slurm.job(id).map(SlurmJob::state)).contains(JobState.CANCELLED);
    assertThat(actions).anyMatch(x -> x.startsWith("condition false GroupInvalid: group kse/llm"));
    cache.pollOnce();
    // made consistent again at size 2
    delete(pods.get("serving/llm-c"));
    byName("llm-a", "u0", 2, 4);
    cache.pollOnce();
    lifecycle.reconcileAll();
    assertThat(slurm.submissions()).hasSize(2);
    assertThat(slurm.submissions().get(1).nodes()).isEqualTo(2);
    long second = jobId();
    slurm.allocate(second, List.of("gpu-node-1", "gpu-node-2"));
    cache.pollOnce();
    assertThat(nodeOf(a, second)).isEqualTo("gpu-node-1");
  }

  /** A group whose size changed while its job pends gets a job of the new size. */
  @Test
  void aPendingJobOfTheOldSizeIsReplaced() {
    byName("llm-a", "u0", 2, 4);
    byName("llm-b", "u1", 2, 4);
    long id = jobId();
    cache.pollOnce();
    byName("llm-a", "u0", 3, 4);
    byName("llm-b", "u1", 3, 4);
    byName("llm-c", "u2", 3, 4);
    assertThat(slurm.job(id).map(SlurmJob::state)).contains(JobState.CANCELLED);
    cache.pollOnce();
    lifecycle.reconcileAll();
    assertThat(slurm.submissions()).hasSize(2);
    assertThat(slurm.submissions().get(1).nodes()).isEqualTo(3);
  }

  @Test
  void theWholeGroupGoneCancelsItsJob() {
    Pod l = member("llm-0", "u0", 0);
    Pod w1 = member("llm-1", "u1", 1);
    Pod w2 = member("llm-2", "u2", 2);
    List.of(l, w1, w2).forEach(lifecycle::onPod);
    long id = jobId();
    cache.pollOnce();
    delete(l);
    delete(w1);
    assertThat(slurm.job(id).map(SlurmJob::state)).contains(JobState.PENDING);
    delete(w2);
    assertThat(slurm.job(id).map(SlurmJob::state)).contains(JobState.CANCELLED);
  }

  @Test
  void aPreemptedGroupJobEvictsEveryBoundMember() {
    Pod l = member("llm-0", "u0", 0);
    Pod w1 = member("llm-1", "u1", 1);
    Pod w2 = member("llm-2", "u2", 2);
    List.of(l, w1, w2).forEach(lifecycle::onPod);
    long id = jobId();
    slurm.allocate(id, List.of("gpu-node-1", "gpu-node-2", "gpu-node-3"));
    cache.pollOnce();
    bind(l, "gpu-node-1");
    bind(w1, "gpu-node-2");
    bind(w2, "gpu-node-3");
    slurm.end(id, JobState.PREEMPTED);
    cache.pollOnce();
    lifecycle.reconcileAll();
    assertThat(actions.stream().filter(a -> a.startsWith("evict")).toList())
        .hasSize(3)
        .allMatch(a -> a.contains("Slurm job " + id + " ended (PREEMPTED)"));
  }

  @Test
  void afterARestartTheGroupIsRebuiltFromSlurmAloneWithoutASecondJob() {
    writer.set(false);
    List.of(member("llm-0", "u0", 0), member("llm-1", "u1", 1), member("llm-2", "u2", 2))
        .forEach(lifecycle::onPod);
    long id =
        slurm.submit(
            JobSubmission.builder(PlaceholderTag.group("serving", "llm-0", "u0", "kse/llm", 3))
                .nodes(3)
                .build());
    slurm.allocate(id, List.of("gpu-node-1", "gpu-node-2", "gpu-node-3"));
    cache.pollOnce();
    writer.set(true);
    lifecycle.takeOver();
    cache.pollOnce(); // a new writer acts once it has listed Slurm's jobs
    assertThat(slurm.submissions()).hasSize(1);
    assertThat(actions)
        .contains(
            "wake serving/llm-0 -> gpu-node-1",
            "wake serving/llm-1 -> gpu-node-2",
            "wake serving/llm-2 -> gpu-node-3");
  }

  @Test
  void duplicateIndexesAreToldOnEveryMemberAndHoldNoJob() {
    lifecycle.onPod(member("llm-0", "u0", 0));
    lifecycle.onPod(member("llm-1", "u1", 1));
    lifecycle.onPod(member("llm-x", "ux", 1));
    clock.advance(GROUP_WAIT.plusSeconds(1));
    lifecycle.reconcileAll();
    assertThat(slurm.submissions()).isEmpty();
    assertThat(
            actions.stream()
                .filter(a -> a.startsWith("event WaitingForSlurm: group kse/llm cannot be placed"))
                .count())
        .isEqualTo(3);
    assertThat(actions).anyMatch(a -> a.contains("index 1 is claimed by llm-1 and llm-x"));
  }

  @Test
  void membersDisagreeingOnTheirTierAreRefusedWithTheReason() {
    lifecycle.onPod(member("llm-0", "u0", 0));
    lifecycle.onPod(member("llm-1", "u1", 1));
    Pod odd =
        new io.fabric8.kubernetes.api.model.PodBuilder(member("llm-2", "u2", 2))
            .editMetadata()
            .addToLabels("kse-test/tier", "training")
            .endMetadata()
            .build();
    pods.put("serving/llm-2", odd);
    lifecycle.onPod(odd);
    assertThat(slurm.submissions()).isEmpty();
    assertThat(actions.stream().filter(a -> a.startsWith("event PlacementRejected")).toList())
        .hasSize(3)
        .allMatch(a -> a.contains("disagree on their tier"));
  }

  @Test
  void aLeaderWorkerSetWithExclusiveTopologyIsSubmittedForItsLeaderAlone() {
    // LWS creates the workers only once the leader is bound when exclusive-topology is set
    lifecycle.onPod(lwsLeader("u0", "nvidia.com/gpu.clique"));
    assertThat(slurm.submissions()).hasSize(1);
    JobSubmission s = slurm.submissions().get(0);
    assertThat(s.nodes()).isEqualTo(2);
    assertThat(s.constraints()).contains("[nvl-0|nvl-1]");
    assertThat(s.tag().key()).isEqualTo("group:serving/lws/llm/0");
  }

  @Test
  void aTopologyKeyThePolicyDoesNotKnowIsRefusedNamingIt() {
    lifecycle.onPod(lwsLeader("u0", "example.com/rack"));
    assertThat(slurm.submissions()).isEmpty();
    assertThat(actions)
        .anyMatch(
            a ->
                a.startsWith("event PlacementRejected")
                    && a.contains("example.com/rack")
                    && a.contains("cluster.nvlinkDomainTopologyKeys"));
  }

  Pod lwsLeader(String uid, String exclusiveKey) {
    Pod leader =
        new io.fabric8.kubernetes.api.model.PodBuilder(pod("llm-0", uid, Map.of()))
            .editMetadata()
            .addToLabels(WellKnown.LWS_NAME, "llm")
            .addToLabels(WellKnown.LWS_GROUP_INDEX, "0")
            .addToLabels(WellKnown.LWS_WORKER_INDEX, "0")
            .addToAnnotations(WellKnown.LWS_SIZE, "2")
            .addToAnnotations(WellKnown.LWS_EXCLUSIVE, exclusiveKey)
            .endMetadata()
            .build();
    pods.put("serving/llm-0", leader);
    return leader;
  }
}
