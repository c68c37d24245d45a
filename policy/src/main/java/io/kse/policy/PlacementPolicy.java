package io.kse.policy;

import io.kse.policy.model.ClusterSpec;
import io.kse.policy.model.Policy;
import io.kse.policy.model.PreemptionSafety;
import io.kse.policy.model.SlurmSettings;
import io.kse.policy.model.Tier;
import io.kse.policy.model.TierMatch;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;

/**
 * Pod facts in, placeholder job out: picks the pod's tier, applies the tier's Slurm settings, the
 * pod's allowed overrides, its resources and topology, and whether it may preempt right now. Pure
 * and deterministic: the same pod, policy, ledger and time give the same decision.
 */
public final class PlacementPolicy {
  private final Policy policy;

  public PlacementPolicy(Policy policy) {
    this.policy = policy;
  }

  public Policy policy() {
    return policy;
  }

  /** Thrown inside {@link #decide} to stop with a rejection; never escapes. */
  private static final class Rejected extends RuntimeException {
    Rejected(String message) {
      super(message, null, false, false);
    }
  }

  public Decision decide(PodFacts pod, PreemptionLedger ledger, Instant now) {
    List<Contribution> record = new ArrayList<>();
    Tier tier;
    try {
      tier = tierOf(pod, record);
    } catch (Rejected r) {
      return new Decision.Reject(policy.defaultTier(), r.getMessage(), record);
    }
    try {
      return new Decision.Place(tier.name(), job(pod, tier, ledger, now, record), record);
    } catch (Rejected r) {
      return new Decision.Reject(tier.name(), r.getMessage(), record);
    }
  }

  /**
   * One placeholder for a whole group: one node per member, the group's single tier (members that
   * disagree are refused), each node holding the largest member's request (a job asks the same of
   * every node), the topology from the leader's annotations, its tier, or the group's topology key.
   * The leader's annotations stand for the group's overrides.
   */
  public Decision decideGroup(GroupFacts group, PreemptionLedger ledger, Instant now) {
    List<Contribution> record = new ArrayList<>();
    Tier tier;
    try {
      tier = tierOf(group.leader(), record);
      for (PodFacts m : group.members().subList(1, group.members().size())) {
        Tier t = tierOf(m, new ArrayList<>());
        if (!t.name().equals(tier.name())) {
          throw new Rejected(
              "the members of group "
                  + group.id()
                  + " disagree on their tier: "
                  + group.leader().name()
                  + " is in tier "
                  + tier.name()
                  + ", "
                  + m.name()
                  + " in tier "
                  + t.name()
                  + "; one placeholder job has one tier, so give every member the same priority"
                  + " class, labels or "
                  + WellKnown.TIER);
        }
      }
    } catch (Rejected r) {
      return new Decision.Reject(policy.defaultTier(), r.getMessage(), record);
    }
    try {
      if (group.leader().annotations().containsKey(WellKnown.NODES)) {
        throw new Rejected(
            WellKnown.NODES
                + " cannot be set on a member of a group: the group's "
                + group.size()
                + " members give its node count");
      }
      PodFacts perNode = largestOf(group);
      record.add(
          new Contribution(
              "group " + group.id() + " (" + group.source() + ")",
              group.size()
                  + " member(s), one per node, member i on the job's i-th node"
                  + (group.members().stream().allMatch(m -> sameRequests(m, group.leader()))
                      ? ""
                      : "; members ask for different resources, so every node holds the"
                          + " largest request")));
      return new Decision.Place(
          tier.name(), job(perNode, tier, ledger, now, record, Optional.of(group)), record);
    } catch (Rejected r) {
      return new Decision.Reject(tier.name(), r.getMessage(), record);
    }
  }

  /** The leader's identity with, for each resource, the largest request of any member. */
  private static PodFacts largestOf(GroupFacts g) {
    long cpu = 0;
    long mem = 0;
    long dra = 0;
    Map<String, Long> ext = new java.util.HashMap<>();
    for (PodFacts m : g.members()) {
      cpu = Math.max(cpu, m.cpuMillis());
      mem = Math.max(mem, m.memoryBytes());
      dra = Math.max(dra, m.draGpus());
      m.extendedResources().forEach((k, v) -> ext.merge(k, v, Math::max));
    }
    PodFacts l = g.leader();
    return new PodFacts(
        l.namespace(),
        l.name(),
        l.uid(),
        l.labels(),
        l.annotations(),
        l.priorityClassName(),
        l.priority(),
        l.owner(),
        cpu,
        mem,
        ext,
        l.activeDeadlineSeconds(),
        dra);
  }

  private static boolean sameRequests(PodFacts a, PodFacts b) {
    return a.cpuMillis() == b.cpuMillis()
        && a.memoryBytes() == b.memoryBytes()
        && a.extendedResources().equals(b.extendedResources())
        && a.draGpus() == b.draGpus();
  }

  /** The tier alone (first matching rule, else the default), for classification and tests. */
  public String tierName(PodFacts pod) {
    try {
      return tierOf(pod, new ArrayList<>()).name();
    } catch (Rejected r) {
      return policy.defaultTier();
    }
  }

  private Tier tierOf(PodFacts pod, List<Contribution> record) {
    Optional<String> wanted = override(pod, WellKnown.TIER, "tier", record);
    if (wanted.isPresent()) {
      return policy
          .tier(wanted.get())
          .orElseThrow(
              () ->
                  new Rejected(
                      "annotation "
                          + WellKnown.TIER
                          + "="
                          + wanted.get()
                          + " names no tier of the policy"));
    }
    for (int i = 0; i < policy.tiers().size(); i++) {
      Tier t = policy.tiers().get(i);
      if (t.match().isPresent()) {
        Optional<String> why = matches(t.match().get(), pod);
        if (why.isPresent()) {
          record.add(
              new Contribution(
                  "tiers[" + i + "] " + t.name() + ": " + why.get(), "tier " + t.name()));
          return t;
        }
      }
    }
    record.add(
        new Contribution(
            "defaultTier", "tier " + policy.defaultTier() + " (no tier rule matched)"));
    return policy.tier(policy.defaultTier()).orElseThrow();
  }

  /** Empty when the pod does not match; else a short account of why it does. */
  static Optional<String> matches(TierMatch m, PodFacts pod) {
    List<String> why = new ArrayList<>();
    if (!m.priorityClassNames().isEmpty()) {
      if (pod.priorityClassName().isEmpty()
          || !m.priorityClassNames().contains(pod.priorityClassName().get())) {
        return Optional.empty();
      }
      why.add("priorityClassName=" + pod.priorityClassName().get());
    }
    if (m.priorityMin().isPresent() || m.priorityMax().isPresent()) {
      if (pod.priority().isEmpty()) {
        return Optional.empty();
      }
      int p = pod.priority().getAsInt();
      if (m.priorityMin().isPresent() && p < m.priorityMin().getAsInt()
          || m.priorityMax().isPresent() && p > m.priorityMax().getAsInt()) {
        return Optional.empty();
      }
      why.add("priority=" + p);
    }
    if (!m.namespaces().isEmpty()) {
      if (!m.namespaces().contains(pod.namespace())) {
        return Optional.empty();
      }
      why.add("namespace=" + pod.namespace());
    }
    for (Map.Entry<String, String> e : new java.util.TreeMap<>(m.labels()).entrySet()) {
      if (!e.getValue().equals(pod.labels().get(e.getKey()))) {
        return Optional.empty();
      }
      why.add("label " + e.getKey() + "=" + e.getValue());
    }
    for (Map.Entry<String, String> e : new java.util.TreeMap<>(m.annotations()).entrySet()) {
      if (!e.getValue().equals(pod.annotations().get(e.getKey()))) {
        return Optional.empty();
      }
      why.add("annotation " + e.getKey() + "=" + e.getValue());
    }
    return Optional.of(String.join(", ", why));
  }

  private JobSpec job(
      PodFacts pod, Tier tier, PreemptionLedger ledger, Instant now, List<Contribution> record) {
    return job(pod, tier, ledger, now, record, Optional.empty());
  }

  private JobSpec job(
      PodFacts pod,
      Tier tier,
      PreemptionLedger ledger,
      Instant now,
      List<Contribution> record,
      Optional<GroupFacts> group) {
    SlurmSettings s = tier.slurm();
    String from = "tier " + tier.name();
    Optional<String> partition =
        override(pod, WellKnown.PARTITION, "partition", record).or(s::partition);
    Optional<String> qos = override(pod, WellKnown.QOS, "qos", record).or(s::qos);
    Optional<String> account = override(pod, WellKnown.ACCOUNT, "account", record).or(s::account);
    OptionalInt nice =
        override(pod, WellKnown.NICE, "nice", record)
            .map(v -> OptionalInt.of(integer(WellKnown.NICE, v, -10000, 10000)))
            .orElse(s.nice());
    Optional<String> constraint =
        override(pod, WellKnown.CONSTRAINT, "constraint", record).or(s::constraint);
    partition.ifPresent(p -> record.add(new Contribution(from, "partition=" + p)));
    qos.ifPresent(q -> record.add(new Contribution(from, "qos=" + q)));

    int cpus = (int) Math.max(1, (pod.cpuMillis() + 999) / 1000);
    long memMb = (pod.memoryBytes() + (1 << 20) - 1) >> 20;
    Optional<String> gres = gres(pod, record);
    boolean exclusive = gpuOwnership(pod, tier, record);
    int nodes =
        group.isPresent()
            ? group.get().size()
            : override(pod, WellKnown.NODES, "nodes", record)
                .map(v -> integer(WellKnown.NODES, v, 1, WellKnown.MAX_NODES))
                .orElse(1);
    if (nodes > tier.maxNodes()) {
      throw new Rejected(
          (group.isPresent()
                  ? "group " + group.get().id() + " has " + nodes + " members, one per node:"
                  : WellKnown.NODES + "=" + nodes + " is")
              + " more than the "
              + tier.maxNodes()
              + " node(s) tier "
              + tier.name()
              + " allows (tiers[].maxNodes)");
    }
    record.add(
        new Contribution(
            "pod requests",
            "nodes="
                + nodes
                + " cpusPerNode="
                + cpus
                + " memoryPerNodeMb="
                + memMb
                + gres.map(g -> " gres=" + g).orElse("")));

    OptionalInt timeLimit = timeLimit(pod, s, record);

    TopologyRequest topology = TopologyRequest.NONE;
    Optional<String> groupKey = group.flatMap(GroupFacts::topologyKey);
    String topo =
        pod.annotations()
            .getOrDefault(
                WellKnown.TOPOLOGY,
                tier.defaultTopology() == Tier.TopologyDefault.NVLINK_DOMAIN || groupKey.isPresent()
                    ? "nvlink-domain"
                    : "none");
    if (groupKey.isPresent()
        && !policy.cluster().nvlinkDomainTopologyKeys().contains(groupKey.get())) {
      throw new Rejected(
          "group "
              + group.get().id()
              + " asks that all members share the topology key "
              + groupKey.get()
              + ", which the policy does not know as an NVLink domain"
              + " (cluster.nvlinkDomainTopologyKeys: "
              + policy.cluster().nvlinkDomainTopologyKeys()
              + ")");
    }
    switch (topo) {
      case "none" -> {}
      case "nvlink-domain" -> {
        List<String> domains = policy.cluster().nvlinkDomainFeatures();
        if (domains.isEmpty()) {
          throw new Rejected(
              WellKnown.TOPOLOGY
                  + "=nvlink-domain, but the policy names no NVLink"
                  + " domains (cluster.nvlinkDomainFeatures)");
        }
        if (constraint.isPresent()) {
          throw new Rejected(
              WellKnown.TOPOLOGY
                  + "=nvlink-domain cannot be combined with the"
                  + " constraint \""
                  + constraint.get()
                  + "\"");
        }
        int domainNodes = policy.cluster().nvlinkDomainNodes();
        if (domainNodes > 0 && nodes > domainNodes) {
          throw new Rejected(
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
            throw new Rejected(
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
          throw new Rejected(
              "annotation "
                  + WellKnown.TOPOLOGY
                  + "="
                  + topo
                  + " is not a topology; use none or nvlink-domain");
    }
    String switches = pod.annotations().get(WellKnown.SWITCHES);
    String segment = pod.annotations().get(WellKnown.SEGMENT);
    if (switches != null && segment != null) {
      throw new Rejected(WellKnown.SWITCHES + " and " + WellKnown.SEGMENT + " cannot both be set");
    }
    if (switches != null) {
      topology = switches(switches, nodes);
      record.add(new Contribution("annotation " + WellKnown.SWITCHES, "switches=" + switches));
    }
    if (segment != null) {
      if (!policy.cluster().blocks()) {
        throw new Rejected(
            WellKnown.SEGMENT
                + " needs topology/block (Slurm 23.11+), which this"
                + " cluster does not have (cluster.blocks)");
      }
      int size = integer(WellKnown.SEGMENT, segment, 1, WellKnown.MAX_NODES);
      if (nodes % size != 0) {
        throw new Rejected(
            WellKnown.SEGMENT + "=" + size + " does not divide the node count " + nodes);
      }
      topology = new TopologyRequest.Segment(size);
      record.add(new Contribution("annotation " + WellKnown.SEGMENT, "segment=" + size));
    }
    boolean preempting = !tier.mayPreempt().isEmpty();
    if (preempting) {
      Optional<String> stop = preemptionStop(tier, pod, nodes, ledger, now);
      if (stop.isPresent()) {
        preempting = false;
        partition = s.fallbackPartition().isPresent() ? s.fallbackPartition() : partition;
        qos = s.fallbackQos().isPresent() ? s.fallbackQos() : qos;
        record.add(
            new Contribution(
                "preemption",
                stop.get()
                    + ": non-preempting fallback"
                    + s.fallbackPartition().map(p -> " partition=" + p).orElse("")
                    + s.fallbackQos().map(q -> " qos=" + q).orElse("")));
      } else {
        record.add(new Contribution(from, "may preempt " + tier.mayPreempt()));
      }
    }
    return new JobSpec(
        partition,
        qos,
        account,
        s.priority(),
        nice,
        nodes,
        cpus,
        memMb,
        gres,
        timeLimit,
        constraint,
        topology,
        exclusive,
        s.reservation(),
        s.licenses(),
        preempting);
  }

  /**
   * Which of the three GPU ownership modes applies, so that no GPU is used by a Slurm job and a pod
   * at once; returns whether the placeholder must hold its nodes whole. DRA: the extender gives the
   * pod's claims exactly the GPUs Slurm gave the placeholder. Whole node: the device plugin picks a
   * device-plugin pod's GPUs on its own, so only a node no Slurm job shares is safe. Declared
   * unshared: the tier says its nodes never run Slurm jobs beside pods.
   */
  private boolean gpuOwnership(PodFacts pod, Tier tier, List<Contribution> record) {
    boolean exclusive = tier.slurm().exclusive();
    String mode = "gpu ownership";
    if (pod.draGpus() > 0 && pod.devicePluginGpus() > 0) {
      throw new Rejected(
          "the pod asks GPUs both as "
              + PodFacts.GPU
              + " ("
              + pod.devicePluginGpus()
              + ", picked by the device plugin) and through ResourceClaims ("
              + pod.draGpus()
              + "); ask them one way");
    }
    if (pod.draGpus() > 0) {
      record.add(
          new Contribution(
              mode,
              "DRA: the extender allocates the pod's ResourceClaims from the GPU indices Slurm"
                  + " gives the placeholder"));
      return exclusive;
    }
    if (pod.devicePluginGpus() <= 0) {
      return exclusive;
    }
    int perNode = policy.cluster().gpusPerNode();
    if (exclusive) {
      record.add(
          new Contribution(
              mode, "whole node: the tier's placeholder is exclusive (device-plugin GPUs)"));
    } else if (perNode > 0 && pod.devicePluginGpus() >= perNode) {
      record.add(
          new Contribution(
              mode,
              "whole node: the pod asks all "
                  + perNode
                  + " GPUs of a node (cluster.gpusPerNode; device-plugin GPUs)"));
    } else if (tier.riskGpuOverlapWithSlurmJobs()) {
      record.add(
          new Contribution(
              mode,
              "declared unshared: tier "
                  + tier.name()
                  + " sets riskGpuOverlapWithSlurmJobs, so its nodes must never run Slurm jobs"
                  + " beside pods (the device plugin picks the pod's GPUs, not Slurm)"));
    } else {
      exclusive = true;
      record.add(
          new Contribution(
              mode,
              "whole node: the device plugin, not Slurm, picks the pod's "
                  + pod.devicePluginGpus()
                  + " GPU(s), so the placeholder holds its node exclusively; ask GPUs through a"
                  + " ResourceClaim for a part of a node"));
    }
    return exclusive;
  }

  private Optional<String> gres(PodFacts pod, List<Contribution> record) {
    List<String> parts = new ArrayList<>();
    ClusterSpec c = policy.cluster();
    if (pod.gpus() > 0) {
      parts.add(c.gpuGres() + c.gpuType().map(t -> ":" + t).orElse("") + ":" + pod.gpus());
    }
    for (Map.Entry<String, Long> e : new java.util.TreeMap<>(pod.extendedResources()).entrySet()) {
      if (e.getKey().equals(PodFacts.GPU) || e.getValue() <= 0) {
        continue;
      }
      String gresName = c.extendedResources().get(e.getKey());
      if (gresName != null) {
        parts.add(gresName + ":" + e.getValue());
        record.add(
            new Contribution("cluster.extendedResources", e.getKey() + " -> gres " + gresName));
      } else if (c.kubernetesOnly(e.getKey())) {
        record.add(
            new Contribution(
                "cluster.kubernetesOnlyResources",
                e.getKey() + " is accounted by Kubernetes alone, not held by the placeholder"));
      } else {
        // dropping it would let Slurm pick a node without it, and the pod would never bind
        throw new Rejected(
            "the pod requests "
                + e.getKey()
                + ", which no Slurm GRES maps to: map it in cluster.extendedResources, or list"
                + " it in cluster.kubernetesOnlyResources if Kubernetes alone accounts for it");
      }
    }
    return parts.isEmpty() ? Optional.empty() : Optional.of(String.join(",", parts));
  }

  private OptionalInt timeLimit(PodFacts pod, SlurmSettings s, List<Contribution> record) {
    Optional<String> o = override(pod, WellKnown.TIME_LIMIT, "time-limit", record);
    if (o.isPresent()) {
      try {
        Duration d = Durations.parse(o.get());
        return OptionalInt.of((int) Math.max(1, (d.getSeconds() + 59) / 60));
      } catch (IllegalArgumentException e) {
        throw new Rejected("annotation " + WellKnown.TIME_LIMIT + ": " + e.getMessage());
      }
    }
    OptionalInt limit = s.timeLimitMinutes();
    if (pod.activeDeadlineSeconds().isPresent()) {
      int fromPod = (int) Math.max(1, (pod.activeDeadlineSeconds().getAsLong() + 59) / 60);
      if (limit.isEmpty() || fromPod < limit.getAsInt()) {
        record.add(new Contribution("pod activeDeadlineSeconds", "timeLimit=" + fromPod + "m"));
        return OptionalInt.of(fromPod);
      }
    }
    return limit;
  }

  private TopologyRequest switches(String value, int nodes) {
    if (!policy.cluster().switches()) {
      throw new Rejected(
          WellKnown.SWITCHES
              + " needs switch requests (cluster.switches: true,"
              + " slurmrestd v0.0.41+); use "
              + WellKnown.TOPOLOGY
              + "=nvlink-domain instead");
    }
    String[] parts = value.split("@", 2);
    int count = integer(WellKnown.SWITCHES, parts[0], 1, 64);
    Duration wait = Duration.ofMinutes(5);
    if (parts.length == 2) {
      try {
        wait = Durations.parse(parts[1]);
      } catch (IllegalArgumentException e) {
        throw new Rejected(
            "annotation " + WellKnown.SWITCHES + "=" + value + ": " + e.getMessage());
      }
    }
    if (count > nodes) {
      throw new Rejected(
          WellKnown.SWITCHES
              + "="
              + count
              + " is more switches than the "
              + nodes
              + " node(s) requested");
    }
    return new TopologyRequest.Switches(count, wait);
  }

  /** Why this tier may not preempt now (dry run, budget), or empty when it may. */
  private Optional<String> preemptionStop(
      Tier tier, PodFacts pod, int nodes, PreemptionLedger ledger, Instant now) {
    PreemptionSafety safety = policy.preemption();
    if (safety.dryRun()) {
      return Optional.of("dry run (preemption.dryRun)");
    }
    for (PreemptionSafety.Budget b : safety.budgets()) {
      if (!b.tier().equals(tier.name())) {
        continue;
      }
      PreemptionLedger.Usage used = ledger.usage(tier.name(), b.window(), now);
      long gpus = pod.gpus() * nodes;
      if (used.gpus() + gpus > b.maxGpus() || used.nodes() + nodes > b.maxNodes()) {
        return Optional.of(
            "budget of tier "
                + tier.name()
                + " used up ("
                + used.gpus()
                + "/"
                + (b.maxGpus() == Integer.MAX_VALUE ? "-" : b.maxGpus())
                + " GPUs, "
                + used.nodes()
                + "/"
                + (b.maxNodes() == Integer.MAX_VALUE ? "-" : b.maxNodes())
                + " nodes in "
                + Durations.slurm(b.window())
                + ")");
      }
    }
    return Optional.empty();
  }

  /** A pod override, if the annotation is present; rejected when the namespace may not use it. */
  private Optional<String> override(
      PodFacts pod, String annotation, String key, List<Contribution> record) {
    String v = pod.annotations().get(annotation);
    if (v == null) {
      return Optional.empty();
    }
    if (!policy.overrides().allows(pod.namespace(), key)) {
      throw new Rejected(
          "annotation "
              + annotation
              + " is not allowed in namespace "
              + pod.namespace()
              + " (policy overrides.namespaces / overrides.keys)");
    }
    record.add(new Contribution("annotation " + annotation + " (override)", key + "=" + v));
    return Optional.of(v);
  }

  private static int integer(String what, String v, int min, int max) {
    try {
      int n = Integer.parseInt(v.trim());
      if (n < min || n > max) {
        throw new Rejected(what + "=" + v + " is out of range " + min + ".." + max);
      }
      return n;
    } catch (NumberFormatException e) {
      throw new Rejected(what + "=" + v + " is not a whole number");
    }
  }
}
