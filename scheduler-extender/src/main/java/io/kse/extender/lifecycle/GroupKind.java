package io.kse.extender.lifecycle;

import java.util.Optional;

/**
 * What made a set of pods a group (docs/groups.md), as the first part of its id: {@code
 * podgroup/<name>}, {@code lws/<set>/<group index>}, {@code kse/<name>}. The id is also in the
 * placeholder's comment ({@code group=…}), so a job read back from Slurm says its kind here.
 */
public enum GroupKind {
  /** Kubernetes' Workload API: a PodGroup gang. */
  POD_GROUP("podgroup/"),
  /** A LeaderWorkerSet group. */
  LEADER_WORKER_SET("lws/"),
  /** Any other controller, through {@code kse.io/group}. */
  KSE("kse/");

  private final String prefix;

  GroupKind(String prefix) {
    this.prefix = prefix;
  }

  /** The group id of this kind for {@code name} (e.g. {@code podgroup/gang}). */
  public String id(String name) {
    return prefix + name;
  }

  /** The kind of a group id, if it is one of ours. */
  public static Optional<GroupKind> of(String id) {
    for (GroupKind k : values()) {
      if (id.startsWith(k.prefix)) {
        return Optional.of(k);
      }
    }
    return Optional.empty();
  }

  /** What follows the kind in the id (a PodGroup's name, say). */
  public String nameIn(String id) {
    if (!id.startsWith(prefix)) {
      throw new IllegalArgumentException(id + " is not a group id of kind " + this);
    }
    return id.substring(prefix.length());
  }
}
