package io.kse.extender.filter;

import static org.assertj.core.api.Assertions.assertThat;

import io.kse.extender.k8s.NodeNames;
import io.kse.extender.k8s.PodRef;
import io.kse.extender.lifecycle.PlaceholderRegistry;
import io.kse.extender.lifecycle.PlaceholderState;
import io.kse.extender.testing.FakeSlurm;
import io.kse.extender.wire.FilterRequest;
import io.kse.slurm.JobState;
import io.kse.slurm.JobSubmission;
import io.kse.slurm.PlaceholderTag;
import io.kse.slurm.cache.SlurmStateCache;
import io.kse.slurm.testing.FakeSlurmClient;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class FilterServiceTest {
  static final PodRef POD = new PodRef("serving", "llm-0", "uid-1");
  final FakeSlurm fake = new FakeSlurm();
  final FakeSlurmClient slurm = fake.client;
  final SlurmStateCache cache = fake.cache;
  final PlaceholderRegistry registry = new PlaceholderRegistry();
  final NodeNames names = new NodeNames();
  final List<PodRef> requested = new ArrayList<>();
  final FilterService service =
      new FilterService(
          cache,
          registry,
          names,
          requested::add,
          io.kse.extender.lifecycle.Placement::of,
          cache::allocationHinted);

  static FilterRequest request(String... nodes) {
    return new FilterRequest(POD, "slurm-inference", Map.of(), List.of(nodes), Map.of(), false);
  }

  long submit() {
    return slurm.submit(
        JobSubmission.builder(new PlaceholderTag(POD.namespace(), POD.name(), POD.uid())).build());
  }

  @Test
  void aPodWithoutPlaceholderAsksForOneAndWaits() {
    cache.pollOnce();
    FilterVerdict v = service.filter(request("gpu-node-0", "gpu-node-1"));
    assertThat(v.passing()).isEmpty();
    assertThat(v.code()).isEqualTo(FilterVerdict.Code.NOT_SUBMITTED);
    assertThat(requested).containsExactly(POD);
  }

  @Test
  void aSubmittedJobTheCacheHasNotSeenYetIsPending() {
    registry.put(POD.uid(), new PlaceholderState.Submitted(42, "inference", Instant.now()));
    cache.pollOnce();
    FilterVerdict v = service.filter(request("gpu-node-0"));
    assertThat(v.reason()).isEqualTo("kse: waiting for Slurm job 42 (submitted)");
    assertThat(requested).isEmpty();
  }

  static FilterRequest wokenFor(long jobId, String... nodes) {
    return new FilterRequest(
        POD,
        "slurm-inference",
        Map.of(io.kse.extender.k8s.WellKnown.JOB_ANNOTATION, Long.toString(jobId)),
        List.of(nodes),
        Map.of(),
        false);
  }

  /**
   * Issue 29: the replica kube-scheduler asks had not read the writer's job when the woken pod
   * came; its rejection ("not submitted") left the pod unschedulable for 104 s. It asks for a retry
   * while it reads the job, then decides as always.
   */
  @Test
  void aPodWokenForAJobThisReplicaHasNotReadIsRetriedNotRejected() {
    cache.pollOnce(); // listed before the writer submitted
    long id = submit();
    slurm.allocate(id, List.of("gpu-node-1"));
    List<Long> lookedFor = new ArrayList<>();
    FilterService asked =
        new FilterService(
            cache,
            registry,
            names,
            requested::add,
            io.kse.extender.lifecycle.Placement::of,
            j -> {
              lookedFor.add(j);
              cache.track(j);
            });

    FilterVerdict first = asked.filter(wokenFor(id, "gpu-node-0", "gpu-node-1"));

    assertThat(first.code()).isEqualTo(FilterVerdict.Code.JOB_NOT_READ_YET);
    assertThat(first.code().retry()).isTrue();
    assertThat(first.reason()).contains("Slurm job " + id, "retry");
    assertThat(lookedFor).containsExactly(id);
    assertThat(requested).as("no placeholder asked for: the pod has one").isEmpty();

    cache.pollOnce();
    FilterVerdict after = asked.filter(wokenFor(id, "gpu-node-0", "gpu-node-1"));
    assertThat(after.passing()).containsExactly("gpu-node-1");
    assertThat(lookedFor).as("read once: not looked for again").containsExactly(id);
  }

  @Test
  void aPodNamingAJobThatIsNotOursIsRetriedOnlyUntilTheJobIsRead() {
    cache.pollOnce();
    long foreign = slurm.addForeignJob("training", JobState.RUNNING, List.of("gpu-node-1"));
    FilterService asked = service;
    assertThat(asked.filter(wokenFor(foreign, "gpu-node-1")).code())
        .isEqualTo(FilterVerdict.Code.JOB_NOT_READ_YET);

    cache.pollOnce(); // read: not ours, dropped

    FilterVerdict v = asked.filter(wokenFor(foreign, "gpu-node-1"));
    assertThat(v.code()).isEqualTo(FilterVerdict.Code.NOT_SUBMITTED);
    assertThat(v.passing()).isEmpty();
  }

  @Test
  void aPendingJobRejectsEveryNodeWithSlurmsReason() {
    long id = submit();
    cache.pollOnce();
    FilterVerdict v = service.filter(request("gpu-node-0", "gpu-node-1"));
    assertThat(v.passing()).isEmpty();
    assertThat(v.reason()).isEqualTo("kse: waiting for Slurm job " + id + " (Priority)");
  }

  @Test
  void onlyTheAllocatedNodePasses() {
    long id = submit();
    slurm.allocate(id, List.of("gpu-node-1"));
    cache.pollOnce();
    FilterVerdict v = service.filter(request("gpu-node-0", "gpu-node-1"));
    assertThat(v.passing()).containsExactly("gpu-node-1");
    assertThat(v.code()).isEqualTo(FilterVerdict.Code.ALLOCATED);
  }

  @Test
  void anAllocatedNodeMissingFromTheCandidatesIsExplained() {
    long id = submit();
    slurm.allocate(id, List.of("gpu-node-1"));
    cache.pollOnce();
    FilterVerdict v = service.filter(request("gpu-node-0"));
    assertThat(v.passing()).isEmpty();
    assertThat(v.reason())
        .contains("allocated gpu-node-1 to this pod, which is not among the candidate nodes");
  }

  @Test
  void mapsSlurmNodesToKubernetesNodesByLabel() {
    names.observe("k8s-a", "gpu-node-1");
    long id = submit();
    slurm.allocate(id, List.of("gpu-node-1"));
    cache.pollOnce();
    assertThat(service.filter(request("k8s-a", "gpu-node-0")).passing()).containsExactly("k8s-a");
  }

  @Test
  void aPlaceholderThatEndedBeforeBindingIsReplaced() {
    long id = submit();
    slurm.allocate(id, List.of("gpu-node-1"));
    slurm.end(id, JobState.PREEMPTED);
    cache.pollOnce();
    FilterVerdict v = service.filter(request("gpu-node-1"));
    assertThat(v.passing()).isEmpty();
    assertThat(v.code()).isEqualTo(FilterVerdict.Code.JOB_ENDED);
    assertThat(requested).containsExactly(POD);
  }

  @Test
  void aPolicyRejectionIsStableAndFinal() {
    registry.put(POD.uid(), new PlaceholderState.Rejected("annotation kse.io/qos is not allowed"));
    cache.pollOnce();
    FilterVerdict v = service.filter(request("gpu-node-0"));
    assertThat(v.reason())
        .isEqualTo("kse: rejected by the placement policy: annotation kse.io/qos is not allowed");
    assertThat(requested).isEmpty();
  }

  @Test
  void aGroupMemberPassesOnlyOnItsOwnNodeOfTheAllocation() {
    PodRef worker = new PodRef("serving", "llm-0-1", "uid-w");
    io.kse.extender.lifecycle.Placement group =
        new io.kse.extender.lifecycle.Placement(
            "group:serving/lws/llm/0",
            List.of(
                new io.kse.extender.lifecycle.Placement.Slot(POD, 0),
                new io.kse.extender.lifecycle.Placement.Slot(worker, 1)),
            2,
            java.util.Optional.of(
                new io.kse.extender.lifecycle.Placement.Group(
                    "serving",
                    "lws/llm/0",
                    "LeaderWorkerSet llm group 0",
                    false,
                    java.util.Optional.empty(),
                    java.util.Optional.empty())));
    FilterService groups =
        new FilterService(
            cache, registry, names, requested::add, p -> group, cache::allocationHinted);
    assertThat(
            groups
                .filter(
                    new FilterRequest(
                        worker,
                        "slurm-inference",
                        Map.of(),
                        List.of("gpu-node-1", "gpu-node-2"),
                        Map.of(),
                        false))
                .code())
        .as("no job yet")
        .isEqualTo(FilterVerdict.Code.GROUP_INCOMPLETE);
    long id =
        slurm.submit(
            JobSubmission.builder(PlaceholderTag.group("serving", "llm-0", "uid-1", "lws/llm/0", 2))
                .nodes(2)
                .build());
    slurm.allocate(id, List.of("gpu-node-2", "gpu-node-1"));
    cache.pollOnce();
    FilterVerdict leader = groups.filter(request("gpu-node-1", "gpu-node-2"));
    assertThat(leader.passing()).containsExactly("gpu-node-2");
    FilterVerdict w =
        groups.filter(
            new FilterRequest(
                worker,
                "slurm-inference",
                Map.of(),
                List.of("gpu-node-1", "gpu-node-2"),
                Map.of(),
                false));
    assertThat(w.passing()).containsExactly("gpu-node-1");
  }
}
