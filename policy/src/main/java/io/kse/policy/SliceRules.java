package io.kse.policy;

import io.kse.policy.model.ClusterSpec;
import io.kse.policy.model.TpuSlices;
import java.util.List;
import java.util.Optional;
import java.util.TreeSet;

/**
 * Where a TPU pod or group goes: whole slices. A pod asking TPU chips names its slice by node
 * selector (accelerator type, topology); the slice's hosts are one topology/block block, so the
 * placeholder asks every host of the slice as one segment, on hosts carrying the slice's feature. A
 * group of S times a slice's hosts is a multislice: one job, S segments, each a whole slice. Every
 * refusal names what is wrong.
 */
final class SliceRules {
  private final ClusterSpec cluster;

  SliceRules(ClusterSpec cluster) {
    this.cluster = cluster;
  }

  /**
   * What a slice placement asks of Slurm.
   *
   * @param accelerator the accelerator type (the node label's value)
   * @param shape the slice topology
   * @param hosts hosts per slice: the segment size
   * @param slices how many whole slices (more than 1: a multislice)
   * @param chipsPerHost chips the job holds on each host
   * @param feature the Slurm feature every host of such a slice carries
   * @param gres the Slurm GRES name of TPU chips
   */
  record Slice(
      String accelerator,
      SliceShape shape,
      int hosts,
      int slices,
      int chipsPerHost,
      String feature,
      String gres) {
    String gresRequest() {
      return gres + ":" + chipsPerHost;
    }
  }

  /**
   * Without {@code cluster.tpu}, a policy that maps the TPU resource in {@code
   * cluster.extendedResources} keeps asking it as a plain GRES, as before slices existed.
   */
  boolean takenAsPlainGres() {
    return cluster.tpu().isEmpty() && cluster.extendedResources().containsKey(resource());
  }

  /** The Kubernetes resource of TPU chips: the policy's, else GKE's. */
  String resource() {
    return cluster.tpu().map(TpuSlices::resource).orElse(TpuSlices.GKE_RESOURCE);
  }

  /**
   * The slice the pod (standing for its group, one member per node) asks; empty when it asks no TPU
   * chips. {@code nodes} is the job's node count.
   */
  Optional<Slice> of(
      PodFacts pod, Optional<GroupFacts> group, int nodes, List<Contribution> record) {
    group.ifPresent(this::sameSliceForAll);
    long asked = pod.extendedResources().getOrDefault(resource(), 0L);
    if (asked <= 0 || takenAsPlainGres()) {
      return Optional.empty();
    }
    TpuSlices tpu =
        cluster
            .tpu()
            .orElseThrow(
                () ->
                    new PlacementPolicy.Rejected(
                        "the pod asks "
                            + resource()
                            + ", but the policy names no TPU slices (cluster.tpu)"));
    for (String a : List.of(WellKnown.TOPOLOGY, WellKnown.SWITCHES, WellKnown.SEGMENT)) {
      if (pod.annotations().containsKey(a)) {
        throw new PlacementPolicy.Rejected(
            "annotation "
                + a
                + " cannot be set on a TPU pod: its slice is its topology (the nodeSelector "
                + tpu.topologyLabel()
                + ")");
      }
    }
    String type = selected(pod, tpu.acceleratorLabel(), tpu);
    String topology = selected(pod, tpu.topologyLabel(), tpu);
    TpuSlices.Accelerator acc =
        tpu.accelerator(type)
            .orElseThrow(
                () ->
                    new PlacementPolicy.Rejected(
                        "nodeSelector "
                            + tpu.acceleratorLabel()
                            + "="
                            + type
                            + " is no TPU type of the cluster (cluster.tpu.accelerators: "
                            + new TreeSet<>(tpu.accelerators().keySet())
                            + ")"));
    SliceShape shape;
    int hosts;
    try {
      shape = SliceShape.parse(topology);
      hosts = shape.hosts(acc.chipsPerHost());
    } catch (IllegalArgumentException e) {
      throw new PlacementPolicy.Rejected(
          "nodeSelector " + tpu.topologyLabel() + "=" + topology + ": " + e.getMessage());
    }
    if (!acc.topologies().contains(shape.topology())) {
      throw new PlacementPolicy.Rejected(
          "the cluster has no "
              + type
              + " slice of topology "
              + topology
              + " (cluster.tpu.accelerators."
              + type
              + ".topologies: "
              + acc.topologies()
              + ")");
    }
    int perHost = shape.chipsOnEachHost(acc.chipsPerHost());
    if (asked != perHost) {
      throw new PlacementPolicy.Rejected(
          "the pod asks "
              + asked
              + " "
              + resource()
              + ", but a "
              + type
              + " slice of topology "
              + topology
              + " gives each of its "
              + hosts
              + " host(s) "
              + perHost
              + " chips: ask exactly "
              + perHost
              + " (one pod per host, every chip of the slice)");
    }
    if (group.isEmpty() && hosts > 1) {
      throw new PlacementPolicy.Rejected(
          "topology "
              + topology
              + " spans "
              + hosts
              + " hosts, one pod per host: run it as a group of "
              + hosts
              + " (LeaderWorkerSet size "
              + hosts
              + ", or "
              + WellKnown.GROUP
              + " with "
              + WellKnown.GROUP_SIZE
              + ")");
    }
    if (nodes % hosts != 0) {
      throw new PlacementPolicy.Rejected(
          "group "
              + group.map(GroupFacts::id).orElse(pod.name())
              + " has "
              + nodes
              + " members, which is not a whole number of "
              + type
              + " "
              + topology
              + " slices of "
              + hosts
              + " hosts");
    }
    int slices = nodes / hosts;
    if (slices > 1 && group.flatMap(GroupFacts::topologyKey).isPresent()) {
      throw new PlacementPolicy.Rejected(
          "group "
              + group.get().id()
              + " asks that all members share "
              + group.get().topologyKey().get()
              + ", but its "
              + nodes
              + " members are "
              + slices
              + " slices: a multislice spans several");
    }
    if (hosts > 1 && !cluster.blocks()) {
      throw new PlacementPolicy.Rejected(
          "topology "
              + topology
              + " spans "
              + hosts
              + " hosts, placed as one topology/block segment, which this cluster does not have"
              + " (cluster.blocks)");
    }
    Slice slice =
        new Slice(type, shape, hosts, slices, perHost, acc.featureOf(shape.topology()), tpu.gres());
    record.add(
        new Contribution(
            "nodeSelector " + tpu.acceleratorLabel() + ", " + tpu.topologyLabel(),
            (slices > 1 ? "multislice of " + slices + " " : "one ")
                + type
                + " slice"
                + (slices > 1 ? "s" : "")
                + " of "
                + topology
                + " ("
                + shape.chips()
                + " chips on "
                + hosts
                + " host(s) of "
                + perHost
                + "): gres="
                + slice.gresRequest()
                + " constraint="
                + slice.feature()
                + (hosts > 1
                    ? " segment="
                        + hosts
                        + " (each slice one topology/block block, member i on the job's i-th"
                        + " host)"
                    : "")));
    return Optional.of(slice);
  }

  /** A group's members ask the same chips of the same slice type and topology. */
  private void sameSliceForAll(GroupFacts g) {
    String first = sliceAsked(g.leader());
    for (PodFacts m : g.members()) {
      String mine = sliceAsked(m);
      if (!mine.equals(first)) {
        throw new PlacementPolicy.Rejected(
            "the members of group "
                + g.id()
                + " ask different TPU slices: "
                + g.leader().name()
                + " asks "
                + first
                + ", "
                + m.name()
                + " asks "
                + mine
                + "; a slice (or multislice) is of one type and topology, every member asking"
                + " the same chips");
      }
    }
  }

  private String sliceAsked(PodFacts p) {
    long chips = p.extendedResources().getOrDefault(resource(), 0L);
    if (chips <= 0) {
      return "no TPU";
    }
    TpuSlices tpu = cluster.tpu().orElse(null);
    if (tpu == null) {
      return chips + " " + resource();
    }
    return chips
        + " "
        + resource()
        + " on "
        + p.nodeSelector().getOrDefault(tpu.acceleratorLabel(), "?")
        + " "
        + p.nodeSelector().getOrDefault(tpu.topologyLabel(), "?");
  }

  private static String selected(PodFacts pod, String label, TpuSlices tpu) {
    String v = pod.nodeSelector().get(label);
    if (v == null || v.isBlank()) {
      throw new PlacementPolicy.Rejected(
          "the pod asks TPU chips but names no slice: set spec.nodeSelector "
              + tpu.acceleratorLabel()
              + " and "
              + tpu.topologyLabel()
              + " ("
              + label
              + " is missing)");
    }
    return v;
  }
}
