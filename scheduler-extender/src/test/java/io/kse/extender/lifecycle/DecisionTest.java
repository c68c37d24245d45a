package io.kse.extender.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.kse.policy.Decision;
import io.kse.policy.JobSpec;
import io.kse.policy.WellKnown;
import io.kse.slurm.JobSubmission;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * One decider (issue 27): what {@code /explain} shows for a pod is what was submitted for its
 * placement — for a pod of its own and for every kind of group, from every member.
 */
class DecisionTest extends ReconcilerFixture {
  /** The decision /explain shows for the pod now, and the submission its placement got. */
  void assertExplainedAsSubmitted(List<Pod> members) {
    assertThat(slurm.submissions()).as("one placeholder").hasSize(1);
    JobSubmission submitted = slurm.submissions().get(0);
    for (Pod p : members) {
      Decision d = lifecycle.decide(pods.get("serving/" + p.getMetadata().getName()));
      assertThat(d).as(p.getMetadata().getName()).isInstanceOf(Decision.Place.class);
      JobSpec job = ((Decision.Place) d).job();
      assertThat(job.nodes()).as("nodes").isEqualTo(submitted.nodes());
      assertThat(job.gresPerNode()).as("GRES per node").isEqualTo(submitted.gresPerNode());
      assertThat(job.partition()).as("partition").isEqualTo(submitted.partition());
      assertThat(job.qos()).as("QoS").isEqualTo(submitted.qos());
    }
  }

  Pod member(String name, int gpus, Map<String, String> annotations) {
    Pod p =
        new PodBuilder(io.kse.extender.testing.Pods.pending(name, 3, gpus, annotations).build())
            .editMetadata()
            .withUid("uid-" + name)
            .withCreationTimestamp(java.time.Instant.now().minusSeconds(2).toString())
            .endMetadata()
            .build();
    pods.put("serving/" + name, p);
    lifecycle.onPod(p);
    return p;
  }

  @Test
  void aPodOfItsOwn() {
    assertExplainedAsSubmitted(List.of(member("llm-0", 4, Map.of())));
  }

  @Test
  void aKseGroupIndexedByItsMembersWhoseRequestsDiffer() {
    List<Pod> ms =
        List.of(
            member(
                "llm-0",
                2,
                Map.of("kse.io/group", "g", "kse.io/group-size", "3", "kse.io/group-index", "0")),
            member(
                "llm-1",
                8,
                Map.of("kse.io/group", "g", "kse.io/group-size", "3", "kse.io/group-index", "1")),
            member(
                "llm-2",
                4,
                Map.of("kse.io/group", "g", "kse.io/group-size", "3", "kse.io/group-index", "2")));
    assertExplainedAsSubmitted(ms);
    assertThat(slurm.submissions().get(0).gresPerNode()).contains("gpu:h100:8");
  }

  @Test
  void aKseGroupIndexedByName() {
    assertExplainedAsSubmitted(
        List.of(
            member("a", 4, Map.of("kse.io/group", "n", "kse.io/group-size", "2")),
            member("b", 4, Map.of("kse.io/group", "n", "kse.io/group-size", "2"))));
  }

  @Test
  void aLeaderWorkerSetGroup() {
    List<Pod> ms = new java.util.ArrayList<>();
    for (int i = 0; i < 2; i++) {
      Pod p =
          new PodBuilder(
                  io.kse.extender.testing.Pods.pending(
                          "lws-0-" + i, 3, 8, Map.of(WellKnown.LWS_SIZE, "2"))
                      .build())
              .editMetadata()
              .withUid("uid-lws-" + i)
              .addToLabels(WellKnown.LWS_NAME, "lws")
              .addToLabels(WellKnown.LWS_GROUP_INDEX, "0")
              .addToLabels(WellKnown.LWS_WORKER_INDEX, Integer.toString(i))
              .endMetadata()
              .build();
      pods.put("serving/" + p.getMetadata().getName(), p);
      lifecycle.onPod(p);
      ms.add(p);
    }
    assertExplainedAsSubmitted(ms);
  }

  @Test
  void aWorkloadApiGang() {
    podGroups.put("serving/gang", new GroupMembership.PodGroupSpec(2, Optional.empty()));
    List<Pod> ms = new java.util.ArrayList<>();
    for (int i = 0; i < 2; i++) {
      Pod p =
          new PodBuilder(io.kse.extender.testing.Pods.pending("gang-" + i, 3, 4, Map.of()).build())
              .editMetadata()
              .withUid("uid-gang-" + i)
              .endMetadata()
              .editSpec()
              .withNewSchedulingGroup("gang")
              .endSpec()
              .build();
      pods.put("serving/" + p.getMetadata().getName(), p);
      lifecycle.onPod(p);
      ms.add(p);
    }
    assertExplainedAsSubmitted(ms);
    assertThat(slurm.submissions().get(0).nodes()).isEqualTo(2);
  }
}
