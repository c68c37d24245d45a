package io.kse.extender.lifecycle;

import io.fabric8.kubernetes.api.model.Pod;
import io.kse.extender.k8s.PodRef;
import io.kse.extender.lifecycle.GroupMembership.PodGroupSpec;
import io.kse.policy.WellKnown;
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

  /**
   * One member pod, its index and the GPUs it asks per node.
   *
   * @param gpus what the shape check compares with the job's GPUs per node; 0: not checked
   */
  public record Slot(PodRef ref, int index, long gpus) {
    public Slot(PodRef ref, int index) {
      this(ref, index, 0);
    }
  }

  /**
   * What the extender knows of a member pod beyond its own metadata: where it already is, or was
   * sent, and what it asks.
   */
  public interface MemberView {
    /**
     * The index, in the group's current job's allocation, of the node the pod is bound to or was
     * woken for (its {@code kse.io/slurm-node}, for that job): it keeps that index.
     */
    java.util.OptionalInt seat(Pod pod);

    /** The GPUs per node the pod asks. */
    long gpus(Pod pod);

    /** Nothing known: indexes by name alone, no GPUs compared. */
    MemberView NONE =
        new MemberView() {
          @Override
          public java.util.OptionalInt seat(Pod pod) {
            return java.util.OptionalInt.empty();
          }

          @Override
          public long gpus(Pod pod) {
            return 0;
          }
        };
  }

  /**
   * The one rule of where a member goes: member {@code index} to the allocation's {@code index}-th
   * node (Slurm's hostlist order), when the job is running, holds such a node, and holds on it at
   * least the {@code gpus} the member asks (when Slurm says how many it holds). Empty: the job
   * holds no node for this member. The filter, bind, the reconciler's rules and /explain all ask
   * here.
   */
  public static Optional<String> nodeOf(int index, long gpus, io.kse.slurm.SlurmJob job) {
    if (!job.isAllocated() || index < 0 || index >= job.nodes().size() || !fits(gpus, job)) {
      return Optional.empty();
    }
    return Optional.of(job.nodes().get(index));
  }

  /** The Slurm node of {@code job} that member {@code pod} goes to (see {@link #nodeOf}). */
  public Optional<String> nodeOf(PodRef pod, io.kse.slurm.SlurmJob job) {
    return members.stream()
        .filter(s -> s.ref().equals(pod))
        .findFirst()
        .flatMap(s -> nodeOf(s.index(), s.gpus(), job));
  }

  /** Whether the job holds at least {@code gpus} per node (unknown counts: it does). */
  public static boolean fits(long gpus, io.kse.slurm.SlurmJob job) {
    int held = job.gpusPerNode();
    return held == 0 || gpus <= held;
  }

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

  /** The UIDs of its members, as a stable signature of who they are. */
  public String uids() {
    return members.stream()
        .map(s -> s.ref().uid())
        .sorted()
        .collect(java.util.stream.Collectors.joining(","));
  }

  /**
   * The members that exist and still need the job, in index order (the leader first), from the pods
   * the informer holds now ({@code pods} by UID): what a placement is decided on.
   */
  public List<Pod> needing(Map<String, Optional<Pod>> pods) {
    return members.stream()
        .sorted(Comparator.comparingInt(Slot::index))
        .map(
            m ->
                pods.getOrDefault(m.ref().uid(), Optional.empty())
                    .filter(p -> PlacementFacts.PodStanding.of(Optional.of(p)).needsJob()))
        .flatMap(Optional::stream)
        .toList();
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

  /** The group as its pods' metadata alone say (tests). */
  public static Placement group(
      String key,
      String namespace,
      List<Pod> pods,
      Function<String, Optional<PodGroupSpec>> podGroups) {
    return group(key, namespace, pods, podGroups, MemberView.NONE);
  }

  /**
   * The group {@code key} from the pods the informer holds for it (any order). Indexes come from
   * the members' own keys or, where they give none, are seats (see {@link #seats}); size from the
   * leader, else the largest any member names. Anything inconsistent is the group's {@link
   * Group#problem()}.
   */
  public static Placement group(
      String key,
      String namespace,
      List<Pod> pods,
      Function<String, Optional<PodGroupSpec>> podGroups,
      MemberView view) {
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
              + WellKnown.GROUP_INDEX
              + ") and others do not; set it on all or none");
    }
    TreeSet<Integer> sizes = new TreeSet<>();
    ms.stream().filter(m -> m.problem().isEmpty()).forEach(m -> sizes.add(m.size()));
    int size = sizes.isEmpty() ? 1 : sizes.last();
    int[] seats = byName ? seats(sorted, size, view) : null;
    List<Slot> slots = new ArrayList<>();
    Map<Integer, List<String>> live = new HashMap<>();
    for (int i = 0; i < sorted.size(); i++) {
      Pod p = sorted.get(i);
      int index = byName ? seats[i] : ms.get(i).index();
      slots.add(new Slot(PodRef.of(p), index, view.gpus(p)));
      PlacementFacts.PodStanding standing = PlacementFacts.PodStanding.of(Optional.of(p));
      if (standing == PlacementFacts.PodStanding.PENDING
          || standing == PlacementFacts.PodStanding.BOUND) {
        live.computeIfAbsent(index, x -> new ArrayList<>()).add(name(p));
      }
    }
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

  /**
   * Indexes for a group whose members give none, decided once for the life of its job: a member
   * already on (or sent to) a node of the job keeps that node's index, whoever else comes or goes;
   * the others take the free indexes in name order; a member still needing the job beyond the free
   * ones shares the index of one being deleted (and waits for it to go), and what is left gets an
   * index past the group's size (no node).
   */
  static int[] seats(List<Pod> byName, int size, MemberView view) {
    int[] seat = new int[byName.size()];
    java.util.Arrays.fill(seat, -1);
    boolean[] taken = new boolean[Math.max(size, 0)];
    for (int i = 0; i < byName.size(); i++) {
      java.util.OptionalInt s =
          needsJob(byName.get(i)) ? view.seat(byName.get(i)) : java.util.OptionalInt.empty();
      if (s.isPresent() && s.getAsInt() >= 0 && s.getAsInt() < size && !taken[s.getAsInt()]) {
        seat[i] = s.getAsInt();
        taken[s.getAsInt()] = true;
      }
    }
    int free = 0;
    java.util.Iterator<Integer> leaving = leavingSeats(byName, seat).iterator();
    int beyond = size;
    for (int i = 0; i < byName.size(); i++) {
      if (seat[i] >= 0 || !needsJob(byName.get(i))) {
        continue;
      }
      while (free < size && taken[free]) {
        free++;
      }
      if (free < size) {
        seat[i] = free;
        taken[free] = true;
      } else {
        seat[i] = leaving.hasNext() ? leaving.next() : beyond++;
      }
    }
    for (int i = 0; i < byName.size(); i++) {
      if (seat[i] < 0) {
        seat[i] = beyond++; // gone or finished: no node
      }
    }
    return seat;
  }

  /** The seats of members being deleted while bound: a newcomer may queue behind one. */
  private static List<Integer> leavingSeats(List<Pod> byName, int[] seat) {
    List<Integer> out = new ArrayList<>();
    for (int i = 0; i < byName.size(); i++) {
      if (seat[i] >= 0
          && PlacementFacts.PodStanding.of(Optional.of(byName.get(i)))
              == PlacementFacts.PodStanding.TERMINATING) {
        out.add(seat[i]);
      }
    }
    return out;
  }

  private static boolean needsJob(Pod p) {
    return PlacementFacts.PodStanding.of(Optional.of(p)).needsJob();
  }

  private static String name(Pod p) {
    return p.getMetadata().getName();
  }
}
