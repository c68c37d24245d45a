package io.kse.extender.lifecycle;

import io.fabric8.kubernetes.api.model.Pod;
import io.kse.policy.WellKnown;
import io.kse.slurm.PlaceholderTag;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * Which multi-node group a pod belongs to, read from its own metadata. The precedence, first that
 * applies (docs/groups.md):
 *
 * <ol>
 *   <li>the Kubernetes Workload API: {@code spec.schedulingGroup.podGroupName} names a PodGroup
 *       whose gang {@code minCount} is the size; members are indexed by pod name;
 *   <li>LeaderWorkerSet: {@link WellKnown#LWS_NAME} and {@link WellKnown#LWS_GROUP_INDEX} identify
 *       the group, {@link WellKnown#LWS_SIZE} gives its size, {@link WellKnown#LWS_WORKER_INDEX}
 *       the member's index (leader 0);
 *   <li>anything else: {@link WellKnown#GROUP}, {@link WellKnown#GROUP_SIZE}, optional {@link
 *       WellKnown#GROUP_INDEX} (without it, members are indexed by pod name).
 * </ol>
 *
 * @param id the group's id within the namespace, e.g. {@code lws/llm/0}
 * @param source what made it a group, for Events and /explain
 * @param size how many members (nodes) the group has
 * @param index the member's index, or {@link #BY_NAME} when its pod name orders it
 * @param topologyKey a node label all members must share, if the group's controller asks for one
 * @param leaderFirst whether the group's controller creates the other members only once the leader
 *     is bound (LeaderWorkerSet with exclusive-topology): its job is submitted for the leader alone
 * @param problem what is wrong with the pod's group keys, if anything
 */
public record GroupMembership(
    String id,
    String source,
    int size,
    int index,
    Optional<String> topologyKey,
    boolean leaderFirst,
    Optional<String> problem) {

  /** The member's index is its rank by pod name. */
  public static final int BY_NAME = -1;

  /** The most members a group may have (Slurm's and our limit of nodes per placeholder). */
  public static final int MAX_SIZE = 1024;

  /**
   * A PodGroup (scheduling.k8s.io) as far as grouping needs it.
   *
   * @param scheduled its PodGroupInitiallyScheduled condition is True already
   */
  public record PodGroupSpec(int minCount, Optional<String> topologyKey, boolean scheduled) {
    public PodGroupSpec(int minCount, Optional<String> topologyKey) {
      this(minCount, topologyKey, false);
    }
  }

  /** The placement key: {@code group:<namespace>/<id>}. */
  public String key(String namespace) {
    return PlaceholderTag.groupKey(namespace, id);
  }

  /**
   * The pod's group, if it is in one.
   *
   * @param podGroups the namespace's PodGroups by name (empty when the API is not served)
   */
  public static Optional<GroupMembership> of(
      Pod pod, Function<String, Optional<PodGroupSpec>> podGroups) {
    Map<String, String> labels = orEmpty(pod.getMetadata().getLabels());
    Map<String, String> annotations = orEmpty(pod.getMetadata().getAnnotations());
    Optional<String> podGroup = podGroupName(pod);
    if (podGroup.isPresent()) {
      String name = podGroup.get();
      Optional<PodGroupSpec> spec = podGroups.apply(name);
      return Optional.of(
          spec.map(
                  s ->
                      new GroupMembership(
                          GroupKind.POD_GROUP.id(name),
                          "PodGroup " + name,
                          s.minCount(),
                          BY_NAME,
                          s.topologyKey(),
                          false,
                          s.minCount() < 1 || s.minCount() > MAX_SIZE
                              ? Optional.of(
                                  "PodGroup "
                                      + name
                                      + " has minCount "
                                      + s.minCount()
                                      + "; a group placed by Slurm needs a gang of 1.."
                                      + MAX_SIZE)
                              : Optional.empty()))
              .orElseGet(
                  () ->
                      invalid(
                          GroupKind.POD_GROUP.id(name),
                          "PodGroup " + name,
                          "its PodGroup "
                              + name
                              + " does not exist (yet), or is not a gang (schedulingPolicy.gang)")));
    }
    String lws = labels.get(WellKnown.LWS_NAME);
    if (lws != null) {
      String group = labels.get(WellKnown.LWS_GROUP_INDEX);
      String id = GroupKind.LEADER_WORKER_SET.id(lws + "/" + group);
      String source = "LeaderWorkerSet " + lws + " group " + group;
      if (group == null) {
        return Optional.of(
            invalid(
                GroupKind.LEADER_WORKER_SET.id(lws),
                source,
                "label " + WellKnown.LWS_GROUP_INDEX + " is missing"));
      }
      // LWS's pod webhook labels the leader's worker-index 0 as well
      return Optional.of(
          parsed(
              id,
              source,
              annotations.get(WellKnown.LWS_SIZE),
              WellKnown.LWS_SIZE,
              labels.getOrDefault(WellKnown.LWS_WORKER_INDEX, "0"),
              WellKnown.LWS_WORKER_INDEX,
              Optional.ofNullable(annotations.get(WellKnown.LWS_EXCLUSIVE)),
              annotations.containsKey(WellKnown.LWS_EXCLUSIVE)));
    }
    String kse = annotations.getOrDefault(WellKnown.GROUP, labels.get(WellKnown.GROUP));
    if (kse != null) {
      String id = GroupKind.KSE.id(kse);
      String source = WellKnown.GROUP + "=" + kse;
      if (!kse.matches("[a-z0-9]([a-z0-9.-]{0,61}[a-z0-9])?")) {
        // no group can be formed: the pod is refused on its own
        return Optional.of(
            invalid(
                GroupKind.KSE.id(
                    "invalid/" + pod.getMetadata().getUid().toLowerCase(java.util.Locale.ROOT)),
                source,
                WellKnown.GROUP + " must be a DNS label (a-z 0-9 -, up to 63)"));
      }
      return Optional.of(
          parsed(
              id,
              source,
              annotations.get(WellKnown.GROUP_SIZE),
              WellKnown.GROUP_SIZE,
              annotations.get(WellKnown.GROUP_INDEX),
              WellKnown.GROUP_INDEX,
              Optional.empty(),
              false));
    }
    return Optional.empty();
  }

  private static GroupMembership parsed(
      String id,
      String source,
      String size,
      String sizeKey,
      String index,
      String indexKey,
      Optional<String> topologyKey,
      boolean leaderFirst) {
    if (size == null) {
      return invalid(id, source, "annotation " + sizeKey + " (the group's size) is missing");
    }
    int n = number(size);
    if (n < 1 || n > MAX_SIZE) {
      return invalid(
          id, source, sizeKey + "=" + trim(size) + " is not a whole number 1.." + MAX_SIZE);
    }
    int i = BY_NAME;
    if (index != null) {
      i = number(index);
      if (i < 0 || i >= n) {
        return invalid(
            id,
            source,
            indexKey
                + "="
                + trim(index)
                + " is not a member index 0.."
                + (n - 1)
                + " of the group");
      }
    }
    return new GroupMembership(id, source, n, i, topologyKey, leaderFirst, Optional.empty());
  }

  private static GroupMembership invalid(String id, String source, String problem) {
    return new GroupMembership(
        id, source, 1, BY_NAME, Optional.empty(), false, Optional.of(problem));
  }

  /** {@code spec.schedulingGroup.podGroupName} (Kubernetes 1.36+). */
  static Optional<String> podGroupName(Pod pod) {
    return Optional.ofNullable(pod.getSpec())
        .map(s -> s.getSchedulingGroup())
        .map(g -> g.getPodGroupName())
        .filter(n -> !n.isBlank());
  }

  private static int number(String s) {
    try {
      return Integer.parseInt(s.trim());
    } catch (NumberFormatException e) {
      return Integer.MIN_VALUE;
    }
  }

  private static String trim(String s) {
    return s.length() > 40 ? s.substring(0, 40) + "…" : s;
  }

  private static Map<String, String> orEmpty(Map<String, String> m) {
    return m == null ? Map.of() : m;
  }
}
