package io.kse.policy;

import io.kse.policy.model.ClusterSpec;
import io.kse.policy.model.Policy;
import io.kse.policy.model.SlurmSettings;
import io.kse.policy.model.Tier;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * Pod facts in, placeholder job out: picks the pod's tier, applies the tier's Slurm settings, the
 * pod's allowed overrides, its resources and topology, and whether it may preempt right now. Pure
 * and deterministic: the same pod, policy, ledger and time give the same decision.
 */
public final class PlacementPolicy {
  private final Policy policy;
  private final TopologyRules topology;
  private final SliceRules slices;
  private final PreemptionBudgets budgets;

  public PlacementPolicy(Policy policy) {
    this.policy = policy;
    this.budgets = new PreemptionBudgets(policy.preemption());
    this.topology = new TopologyRules(policy.cluster());
    this.slices = new SliceRules(policy.cluster());
  }

  public Policy policy() {
    return policy;
  }

  /** Thrown inside {@link #decide} to stop with a rejection; never escapes. */
  static final class Rejected extends RuntimeException {
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
        dra,
        l.nodeSelector(),
        g.members().stream().mapToLong(PodFacts::draGpuShares).max().orElse(0),
        l.draMigDevices());
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
        Optional<String> why = TierMatching.matches(t.match().get(), pod);
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
    int nodes = nodeCount(pod, tier, group, record);
    Optional<SliceRules.Slice> slice = slices.of(pod, group, nodes, record);
    Optional<String> gres = gres(pod, tier, slice, record);
    boolean exclusive = GpuOwnership.exclusive(policy.cluster(), pod, tier, record);
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

    TopologyRequest request;
    if (slice.isPresent()) { // the slice is the topology: its feature, one segment per slice
      constraint = Optional.of(withFeature(constraint, slice.get().feature()));
      request =
          slice.get().hosts() > 1
              ? new TopologyRequest.Segment(slice.get().hosts())
              : TopologyRequest.NONE;
    } else {
      constraint = topology.constraint(pod, tier, group, nodes, constraint, record);
      request = topology.request(pod, nodes, record);
    }
    boolean preempting = !tier.mayPreempt().isEmpty();
    Optional<String> stop =
        preempting ? budgets.stop(tier, pod, nodes, ledger, now) : Optional.empty();
    if (stop.isPresent()) { // a budget or dry run: the tier's non-preempting fallback
      preempting = false;
      partition = s.fallbackPartition().isPresent() ? s.fallbackPartition() : partition;
      qos = s.fallbackQos().isPresent() ? s.fallbackQos() : qos;
    }
    if (!tier.mayPreempt().isEmpty()) {
      record.add(PreemptionBudgets.said(tier, stop));
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
        request,
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
  private Optional<String> gres(
      PodFacts pod, Tier tier, Optional<SliceRules.Slice> slice, List<Contribution> record) {
    List<String> parts = new ArrayList<>();
    ClusterSpec c = policy.cluster();
    GpuShareRules.shards(policy.cluster(), pod, tier, record).ifPresent(parts::add);
    parts.addAll(MigRules.gres(policy.cluster(), pod, tier, record));
    if (pod.gpus() > 0) {
      parts.add(c.gpuGres() + c.gpuType().map(t -> ":" + t).orElse("") + ":" + pod.gpus());
    }
    slice.ifPresent(s -> parts.add(s.gresRequest()));
    for (Map.Entry<String, Long> e : new java.util.TreeMap<>(pod.extendedResources()).entrySet()) {
      if (e.getKey().equals(PodFacts.GPU)
          || (e.getKey().equals(slices.resource()) && !slices.takenAsPlainGres())
          || e.getValue() <= 0) {
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

  /** The tier's or pod's constraint, ANDed with a slice's feature; refused when it cannot be. */
  private static String withFeature(Optional<String> constraint, String feature) {
    if (constraint.isEmpty()) {
      return feature;
    }
    if (!constraint.get().matches("[A-Za-z0-9_.&-]+")) {
      throw new Rejected(
          "constraint \""
              + constraint.get()
              + "\" cannot be combined with the TPU slice's feature "
              + feature
              + ": only features joined by & can be");
    }
    return constraint.get() + "&" + feature;
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

  /**
   * How many nodes: the group's members, or the pod's own override; no more than its tier allows.
   */
  private int nodeCount(
      PodFacts pod, Tier tier, Optional<GroupFacts> group, List<Contribution> record) {
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
    return nodes;
  }

  /**
   * For each tier with a preemption budget, how much of it is used in its window: the larger of the
   * GPU and node shares, 1 or more when used up (a budget of 0 counts as used up).
   */
  public Map<String, Double> budgetUse(PreemptionLedger ledger, Instant now) {
    return budgets.use(ledger, now);
  }

  /** The longest window of any preemption budget: how far back the ledger must remember. */
  public Optional<Duration> longestBudgetWindow() {
    return budgets.longestWindow();
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

  static int integer(String what, String v, int min, int max) {
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
