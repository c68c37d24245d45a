package io.kse.extender.lifecycle;

import io.fabric8.kubernetes.api.model.Pod;
import io.kse.extender.k8s.PodRef;
import io.kse.extender.k8s.PodSource;
import io.kse.slurm.PlaceholderTag;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Consumer;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Which placements there are, and which need a pass. The group index (a group's pods by UID) is
 * kept from the informer's events; a placement is looked up as the informer has it now. Passes run
 * one at a time on {@code passes}, one queued per placement at most.
 */
final class PlacementQueue {
  private static final Logger LOG = LoggerFactory.getLogger(PlacementQueue.class);

  private final PodSource pods;
  private final PodGroupSource podGroups;
  private final Executor passes;
  private final Function<String, Placement.MemberView> members;

  /** The pods of each group, by group key and UID. */
  private final Map<String, Map<String, PodRef>> groups = new ConcurrentHashMap<>();

  private final Set<String> queued = ConcurrentHashMap.newKeySet();
  private volatile Consumer<Placement> pass = p -> {};

  /**
   * @param members what is known of a group's members beyond their metadata, by group key
   */
  PlacementQueue(
      PodSource pods,
      PodGroupSource podGroups,
      Executor passes,
      Function<String, Placement.MemberView> members) {
    this.pods = pods;
    this.podGroups = podGroups;
    this.passes = passes;
    this.members = members;
  }

  /** What a pass does (the reconciler, once it exists). */
  void passesRun(Consumer<Placement> pass) {
    this.pass = pass;
  }

  /** Schedules a pass for the pod's placement. */
  void enqueue(PodRef ref) {
    Optional<String> group = pods.pod(ref).flatMap(this::track);
    if (group.isPresent()) {
      enqueueGroup(group.get(), ref.namespace());
    } else {
      enqueue(ref.uid(), () -> Placement.of(ref), ref);
    }
  }

  /** The placement a placeholder stands for: its group, or its pod. */
  void enqueue(PlaceholderTag tag) {
    if (tag.group().isPresent()) {
      enqueueGroup(tag.key(), tag.namespace());
    } else {
      enqueue(PodRef.of(tag));
    }
  }

  /** The pod appeared or changed in the informer. */
  void onPod(Pod pod) {
    Optional<String> group = track(pod);
    if (group.isPresent()) {
      enqueueGroup(group.get(), pod.getMetadata().getNamespace());
    } else {
      enqueue(PodRef.of(pod));
    }
  }

  /** The pod was deleted. */
  void onPodDeleted(Pod pod) {
    Optional<GroupMembership> m = membership(pod);
    if (m.isPresent()) {
      String key = m.get().key(pod.getMetadata().getNamespace());
      groups.computeIfPresent(
          key,
          (k, members) -> {
            members.remove(pod.getMetadata().getUid());
            return members.isEmpty() ? null : members;
          });
      enqueueGroup(key, pod.getMetadata().getNamespace());
    } else {
      enqueue(PodRef.of(pod));
    }
  }

  /** A PodGroup (Workload API) appeared, changed or went: its gang's size may have changed. */
  void onPodGroup(String namespace, String name) {
    enqueueGroup(PlaceholderTag.groupKey(namespace, GroupKind.POD_GROUP.id(name)), namespace);
  }

  /** The placement the pod is in now: its group's, or its own. */
  Placement placementOf(PodRef ref) {
    Optional<GroupMembership> m = pods.pod(ref).flatMap(this::membership);
    return m.map(g -> group(g.key(ref.namespace()), ref.namespace()))
        .orElseGet(() -> Placement.of(ref));
  }

  private void enqueueGroup(String key, String namespace) {
    enqueue(key, () -> group(key, namespace), key);
  }

  private void enqueue(String key, java.util.function.Supplier<Placement> placement, Object what) {
    if (!queued.add(key)) {
      return;
    }
    try {
      passes.execute(
          () -> {
            queued.remove(key);
            try {
              pass.accept(placement.get());
            } catch (RuntimeException e) {
              LOG.warn("reconcile_failed placement={} error={}", what, e.toString(), e);
            }
          });
    } catch (RejectedExecutionException e) {
      queued.remove(key); // shutting down
    }
  }

  /** Records a group member under its group; the group's key, if the pod is in one. */
  private Optional<String> track(Pod pod) {
    return membership(pod)
        .map(
            m -> {
              String key = m.key(pod.getMetadata().getNamespace());
              groups
                  .computeIfAbsent(key, k -> new ConcurrentHashMap<>())
                  .put(pod.getMetadata().getUid(), PodRef.of(pod));
              return key;
            });
  }

  private Optional<GroupMembership> membership(Pod pod) {
    String ns = pod.getMetadata().getNamespace();
    return GroupMembership.of(pod, name -> podGroups.podGroup(ns, name));
  }

  /** The group as the informer has it now (members recreated or gone included). */
  private Placement group(String key, String namespace) {
    List<Pod> found = new ArrayList<>();
    for (PodRef r : groups.getOrDefault(key, Map.of()).values()) {
      pods.pod(r).ifPresent(found::add);
    }
    return Placement.group(
        key, namespace, found, name -> podGroups.podGroup(namespace, name), members.apply(key));
  }
}
