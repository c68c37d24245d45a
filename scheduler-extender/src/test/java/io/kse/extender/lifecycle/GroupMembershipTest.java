package io.kse.extender.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.kse.extender.lifecycle.GroupMembership.PodGroupSpec;
import io.kse.extender.testing.Pods;
import io.kse.policy.WellKnown;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

class GroupMembershipTest {
  static final Function<String, Optional<PodGroupSpec>> NO_PODGROUPS = n -> Optional.empty();

  static Pod pod(String name, Map<String, String> labels, Map<String, String> annotations) {
    return new PodBuilder(Pods.pending(name, 1, 8, annotations).build())
        .editMetadata()
        .withUid("uid-" + name)
        .withLabels(labels)
        .endMetadata()
        .build();
  }

  @Test
  void aPodWithoutGroupKeysIsOnItsOwn() {
    assertThat(GroupMembership.of(pod("a", Map.of(), Map.of()), NO_PODGROUPS)).isEmpty();
  }

  @Test
  void leaderWorkerSetLabelsMakeTheGroupAndTheLeaderIsIndexZero() {
    GroupMembership leader =
        GroupMembership.of(
                pod(
                    "llm-1",
                    Map.of(WellKnown.LWS_NAME, "llm", WellKnown.LWS_GROUP_INDEX, "1"),
                    Map.of(WellKnown.LWS_SIZE, "4")),
                NO_PODGROUPS)
            .orElseThrow();
    assertThat(leader.id()).isEqualTo("lws/llm/1");
    assertThat(leader.size()).isEqualTo(4);
    assertThat(leader.index()).isZero();
    assertThat(leader.leaderFirst()).isFalse();
    assertThat(leader.key("serving")).isEqualTo("group:serving/lws/llm/1");
  }

  @Test
  void thePodGroupComesFirstThenLwsThenOurAnnotations() {
    Pod p =
        new PodBuilder(
                pod(
                    "x",
                    Map.of(WellKnown.LWS_NAME, "llm", WellKnown.LWS_GROUP_INDEX, "0"),
                    Map.of(WellKnown.GROUP, "g", WellKnown.GROUP_SIZE, "2")))
            .editSpec()
            .withNewSchedulingGroup("gang-a")
            .endSpec()
            .build();
    GroupMembership m =
        GroupMembership.of(
                p, n -> Optional.of(new PodGroupSpec(4, Optional.of("nvidia.com/gpu.clique"))))
            .orElseThrow();
    assertThat(m.id()).isEqualTo("podgroup/gang-a");
    assertThat(m.size()).isEqualTo(4);
    assertThat(m.topologyKey()).contains("nvidia.com/gpu.clique");
    assertThat(GroupMembership.of(p, NO_PODGROUPS).orElseThrow().problem())
        .get()
        .asString()
        .contains("PodGroup gang-a does not exist");
  }

  @Test
  void badKeysAreNamed() {
    assertThat(problem(Map.of(WellKnown.GROUP, "g"))).contains("kse.io/group-size");
    assertThat(problem(Map.of(WellKnown.GROUP, "g", WellKnown.GROUP_SIZE, "zero")))
        .contains("kse.io/group-size=zero is not a whole number 1..1024");
    assertThat(
            problem(
                Map.of(
                    WellKnown.GROUP, "g", WellKnown.GROUP_SIZE, "2", WellKnown.GROUP_INDEX, "2")))
        .contains("kse.io/group-index=2 is not a member index 0..1");
    assertThat(problem(Map.of(WellKnown.GROUP, "Not_A_Name", WellKnown.GROUP_SIZE, "2")))
        .contains("must be a DNS label");
  }

  @Test
  void membersWithoutIndexesAreIndexedByName() {
    Map<String, String> g = Map.of(WellKnown.GROUP, "g", WellKnown.GROUP_SIZE, "3");
    Placement p =
        Placement.group(
            "group:serving/kse/g",
            "serving",
            List.of(pod("c", Map.of(), g), pod("a", Map.of(), g), pod("b", Map.of(), g)),
            NO_PODGROUPS);
    assertThat(p.members())
        .extracting(s -> s.ref().name() + "=" + s.index())
        .containsExactly("a=0", "b=1", "c=2");
    assertThat(p.size()).isEqualTo(3);
    assertThat(p.group().orElseThrow().problem()).isEmpty();
  }

  @Test
  void membersDisagreeingOnTheSizeAreAProblemOfTheGroup() {
    Placement p =
        Placement.group(
            "group:serving/kse/g",
            "serving",
            List.of(
                pod("a", Map.of(), Map.of(WellKnown.GROUP, "g", WellKnown.GROUP_SIZE, "2")),
                pod("b", Map.of(), Map.of(WellKnown.GROUP, "g", WellKnown.GROUP_SIZE, "3"))),
            NO_PODGROUPS);
    assertThat(p.group().orElseThrow().problem())
        .get()
        .asString()
        .contains("members disagree on the group's size: [2, 3]");
  }

  private static String problem(Map<String, String> annotations) {
    return GroupMembership.of(pod("p", Map.of(), annotations), NO_PODGROUPS)
        .orElseThrow()
        .problem()
        .orElse("");
  }
}
