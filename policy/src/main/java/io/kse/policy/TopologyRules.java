package io.kse.policy;

import io.kse.policy.model.ClusterSpec;
import io.kse.policy.model.Tier;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Where a job's nodes must be relative to each other: all inside one NVLink domain (a node feature
 * constraint, leaving out domains other exclusive groups hold), or Slurm's own topology requests
 * (switches on topology/tree, a segment on topology/block). Each refusal names what is wrong.
 */
final class TopologyRules {
  private final ClusterSpec cluster;

  TopologyRules(ClusterSpec cluster) {
    this.cluster = cluster;
  }

  /**
   * The feature constraint that keeps the job's {@code nodes} inside one NVLink domain when the
   * pod, its tier or its group asks for it; else {@code constraint} as it was.
   */
  Optional<String> constraint(
      PodFacts pod,
      Tier tier,
      Optional<GroupFacts> group,
      int nodes,
      Optional<String> constraint,
      List<Contribution> record) {
    String from = "tier " + tier.name();
    Optional<String> groupKey = group.flatMap(GroupFacts::topologyKey);
    String topo =
        pod.annotations()
            .getOrDefault(
                WellKnown.TOPOLOGY,
                tier.defaultTopology() == Tier.TopologyDefault.NVLINK_DOMAIN || groupKey.isPresent()
                    ? "nvlink-domain"
                    : "none");
    if (groupKey.isPresent() && !cluster.nvlinkDomainTopologyKeys().contains(groupKey.get())) {
      throw new PlacementPolicy.Rejected(
          "group "
              + group.get().id()
              + " asks that all members share the topology key "
              + groupKey.get()
              + ", which the policy does not know as an NVLink domain"
              + " (cluster.nvlinkDomainTopologyKeys: "
              + cluster.nvlinkDomainTopologyKeys()
              + ")");
    }
    switch (topo) {
      case "none" -> {}
      case "nvlink-domain" -> {
        List<String> domains = cluster.nvlinkDomainFeatures();
        if (domains.isEmpty()) {
          throw new PlacementPolicy.Rejected(
              WellKnown.TOPOLOGY
                  + "=nvlink-domain, but the policy names no NVLink"
                  + " domains (cluster.nvlinkDomainFeatures)");
        }
        if (constraint.isPresent()) {
          throw new PlacementPolicy.Rejected(
              WellKnown.TOPOLOGY
                  + "=nvlink-domain cannot be combined with the"
                  + " constraint \""
                  + constraint.get()
                  + "\"");
        }
        int domainNodes = cluster.nvlinkDomainNodes();
        if (domainNodes > 0 && nodes > domainNodes) {
          throw new PlacementPolicy.Rejected(
              (group.isPresent() ? "group " + group.get().id() + " needs " : "the pod needs ")
                  + nodes
                  + " nodes in one NVLink domain, but a domain has only "
                  + domainNodes
                  + " (cluster.nvlinkDomainNodes): it could never be placed");
        }
        Set<String> taken =
            group.filter(GroupFacts::exclusive).map(GroupFacts::domainsTaken).orElse(Set.of());
        if (!taken.isEmpty()) {
          List<String> free = domains.stream().filter(d -> !taken.contains(d)).toList();
          if (free.isEmpty()) {
            throw new PlacementPolicy.Rejected(
                "group "
                    + group.get().id()
                    + " wants an NVLink domain to itself (exclusive-topology), but other groups"
                    + " hold every domain: "
                    + new java.util.TreeSet<>(taken));
          }
          record.add(
              new Contribution(
                  "exclusive topology",
                  "domains held by other exclusive groups left out: "
                      + new java.util.TreeSet<>(taken)));
          domains = free;
        }
        constraint = Optional.of("[" + String.join("|", domains) + "]");
        record.add(
            new Contribution(
                pod.annotations().containsKey(WellKnown.TOPOLOGY)
                    ? "annotation " + WellKnown.TOPOLOGY
                    : groupKey.isPresent()
                        ? "group topology key " + groupKey.get()
                        : from + " topology",
                "constraint=" + constraint.get() + " (all nodes in one NVLink domain)"));
      }
      default ->
          throw new PlacementPolicy.Rejected(
              "annotation "
                  + WellKnown.TOPOLOGY
                  + "="
                  + topo
                  + " is not a topology; use none or nvlink-domain");
    }
    return constraint;
  }

  /** Slurm's switch or segment request from the pod's annotations; none without them. */
  TopologyRequest request(PodFacts pod, int nodes, List<Contribution> record) {
    TopologyRequest topology = TopologyRequest.NONE;
    String switches = pod.annotations().get(WellKnown.SWITCHES);
    String segment = pod.annotations().get(WellKnown.SEGMENT);
    if (switches != null && segment != null) {
      throw new PlacementPolicy.Rejected(
          WellKnown.SWITCHES + " and " + WellKnown.SEGMENT + " cannot both be set");
    }
    if (switches != null) {
      topology = switches(switches, nodes);
      record.add(new Contribution("annotation " + WellKnown.SWITCHES, "switches=" + switches));
    }
    if (segment != null) {
      if (!cluster.blocks()) {
        throw new PlacementPolicy.Rejected(
            WellKnown.SEGMENT
                + " needs topology/block (Slurm 23.11+), which this"
                + " cluster does not have (cluster.blocks)");
      }
      int size = PlacementPolicy.integer(WellKnown.SEGMENT, segment, 1, WellKnown.MAX_NODES);
      if (nodes % size != 0) {
        throw new PlacementPolicy.Rejected(
            WellKnown.SEGMENT + "=" + size + " does not divide the node count " + nodes);
      }
      topology = new TopologyRequest.Segment(size);
      record.add(new Contribution("annotation " + WellKnown.SEGMENT, "segment=" + size));
    }
    return topology;
  }

  private TopologyRequest switches(String value, int nodes) {
    if (!cluster.switches()) {
      throw new PlacementPolicy.Rejected(
          WellKnown.SWITCHES
              + " needs switch requests (cluster.switches: true,"
              + " slurmrestd v0.0.41+); use "
              + WellKnown.TOPOLOGY
              + "=nvlink-domain instead");
    }
    String[] parts = value.split("@", 2);
    int count = PlacementPolicy.integer(WellKnown.SWITCHES, parts[0], 1, 64);
    Duration wait = Duration.ofMinutes(5);
    if (parts.length == 2) {
      try {
        wait = Durations.parse(parts[1]);
      } catch (IllegalArgumentException e) {
        throw new PlacementPolicy.Rejected(
            "annotation " + WellKnown.SWITCHES + "=" + value + ": " + e.getMessage());
      }
    }
    if (count > nodes) {
      throw new PlacementPolicy.Rejected(
          WellKnown.SWITCHES
              + "="
              + count
              + " is more switches than the "
              + nodes
              + " node(s) requested");
    }
    return new TopologyRequest.Switches(count, wait);
  }
}
