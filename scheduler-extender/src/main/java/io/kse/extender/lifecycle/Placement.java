package io.kse.extender.lifecycle;

import io.fabric8.kubernetes.api.model.Pod;
import io.kse.extender.k8s.PodRef;
import io.kse.extender.lifecycle.GroupMembership.PodGroupSpec;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;
import java.util.function.Function;

/**
 * The unit the reconciler keeps: one or more pods that share one placeholder job. A pod of its own
 * is a placement of one, keyed by its UID; a multi-node group (LeaderWorkerSet, Workload API,
 * {@code kse.io/group}) is one placement keyed by the group, whose members are the group's pods
 * that exist now — possibly none, possibly fewer than its size.
 *
 * @param key what the job and the extender's own records are kept under
 * @param members the pods there are, each with its index: member {@code i} goes to the {@code i}-th
 *     node of the allocation (Slurm's hostlist order)
 * @param size how many members (nodes) the placement has when complete
 * @param group what makes it a group, if it is one
 */
public record Placement(String key, List<Slot> members, int size, Optional<Group> group) {
  public Placement {
    members = List.copyOf(members);
  }

  /** One member pod and its index. */
  public record Slot(PodRef ref, int index) {}

  /**
   * @param namespace where its pods are
   * @param id the group's id within the namespace (see {@link GroupMembership})
   * @param source what made it a group, in the user's words
   * @param exclusiveTopology LeaderWorkerSet exclusive-topology: the group must have its domain to
   *     itself, and its job is submitted once the leader exists (LWS creates the other members only
   *     after the leader is bound)
   * @param topologyKey a node label all members must share, if the controller asks for one
   * @param problem why the group cannot be placed as it is (told on every member), if so
   */
  public record Group(
      String namespace,
      String id,
      String source,
      boolean exclusiveTopology,
      Optional<String> topologyKey,
      Optional<String> problem) {}

  /** A pod of its own. */
  public static Placement of(PodRef pod) {
    return new Placement(pod.uid(), List.of(new Slot(pod, 0)), 1, Optional.empty());
  }

  /** The pod's index in the placement, if it is a member. */
  public java.util.OptionalInt indexOf(PodRef pod) {
    return members.stream().filter(s -> s.ref().equals(pod)).mapToInt(Slot::index).findFirst();
  }

  /**
   * What the policy decides a group on: its members that exist ({@code members}, leader first), and
   * for an exclusive group the NVLink domains other groups hold ({@code domainsTaken} by key).
   */
  public io.kse.policy.GroupFacts groupFacts(
      List<io.kse.policy.PodFacts> members, Function<String, java.util.Set<String>> domainsTaken) {
    Group g = group.orElseThrow();
    return new io.kse.policy.GroupFacts(
        g.id(),
        g.source(),
        size,
        members,
        g.topologyKey(),
        g.exclusiveTopology(),
        g.exclusiveTopology() ? domainsTaken.apply(key) : java.util.Set.of());
  }

  /** Whether the pod is one of the members. */
  public boolean has(PodRef pod) {
    return members.stream().anyMatch(s -> s.ref().equals(pod));
  }

  /** A name for logs: the pod, or the group. */
  public String name() {
    return group
        .map(g -> g.namespace() + "/" + g.id())
        .orElseGet(() -> members.isEmpty() ? key : members.get(0).ref().toString());
  }

  /**
   * The group {@code key} from the pods the informer holds for it (any order). Indexes come from
   * the members' own keys or, where they give none, their names; size from the leader, else the
   * largest any member names. Anything inconsistent is the group's {@link Group#problem()}.
   */
  public static Placement group(
      String key,
      String namespace,
      List<Pod> pods,
      Function<String, Optional<PodGroupSpec>> podGroups) {
    List<Pod> sorted = new ArrayList<>(pods);
    sorted.sort(Comparator.comparing(p -> p.getMetadata().getName()));
    List<GroupMembership> ms = new ArrayList<>();
    for (Pod p : sorted) {
      ms.add(GroupMembership.of(p, podGroups).orElseThrow());
    }
    String id = key.substring(key.indexOf('/') + 1);
    if (sorted.isEmpty()) {
      return new Placement(
          key,
          List.of(),
          1,
          Optional.of(new Group(namespace, id, id, false, Optional.empty(), Optional.empty())));
    }
    List<String> problems = new ArrayList<>();
    for (int i = 0; i < sorted.size(); i++) {
      int at = i;
      ms.get(i).problem().ifPresent(p -> problems.add(name(sorted.get(at)) + ": " + p));
    }
    boolean byName = ms.stream().anyMatch(m -> m.index() == GroupMembership.BY_NAME);
    if (byName && ms.stream().anyMatch(m -> m.index() != GroupMembership.BY_NAME)) {
      problems.add(
          "some members set their index ("
              + GroupMembership.GROUP_INDEX
              + ") and others do not; set it on all or none");
    }
    List<Slot> slots = new ArrayList<>();
    Map<Integer, List<String>> live = new HashMap<>();
    for (int i = 0; i < sorted.size(); i++) {
      Pod p = sorted.get(i);
      int index = byName ? i : ms.get(i).index();
      slots.add(new Slot(PlacementReconciler.ref(p), index));
      PlacementFacts.PodStanding standing = PlacementFacts.PodStanding.of(Optional.of(p));
      if (standing == PlacementFacts.PodStanding.PENDING
          || standing == PlacementFacts.PodStanding.BOUND) {
        live.computeIfAbsent(index, x -> new ArrayList<>()).add(name(p));
      }
    }
    TreeSet<Integer> sizes = new TreeSet<>();
    ms.stream().filter(m -> m.problem().isEmpty()).forEach(m -> sizes.add(m.size()));
    int size = sizes.isEmpty() ? 1 : sizes.last();
    if (sizes.size() > 1) {
      problems.add("members disagree on the group's size: " + sizes);
    }
    live.forEach(
        (index, names) -> {
          if (names.size() > 1) {
            problems.add("index " + index + " is claimed by " + String.join(" and ", names));
          }
        });
    long needing = live.keySet().size();
    if (byName && needing > size) {
      problems.add(needing + " live pods for a group of " + size);
    }
    GroupMembership leader = ms.get(0);
    Optional<String> problem =
        problems.isEmpty() ? Optional.empty() : Optional.of(String.join("; ", problems));
    return new Placement(
        key,
        slots,
        size,
        Optional.of(
            new Group(
                namespace,
                id,
                leader.source(),
                ms.stream().anyMatch(GroupMembership::leaderFirst),
                ms.stream().map(GroupMembership::topologyKey).flatMap(Optional::stream).findFirst(),
                problem)));
  }

  private static String name(Pod p) {
    return p.getMetadata().getName();
  }
}
