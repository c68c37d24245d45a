package io.kse.policy;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

class PlacementPolicyTest {
  private static final Instant NOW = Instant.parse("2026-11-22T06:00:00Z");
  private final PlacementPolicy lab = new PlacementPolicy(Policies.lab());
  private final PreemptionLedger ledger = new PreemptionLedger();

  private Decision decide(PodFacts pod) {
    return lab.decide(pod, ledger, NOW);
  }

  private JobSpec placed(PodFacts pod) {
    Decision d = decide(pod);
    assertThat(d).as("decision %s", d).isInstanceOf(Decision.Place.class);
    return ((Decision.Place) d).job();
  }

  @Test
  void matchesThePriorityClassFirst() {
    Decision d = decide(Policies.pod("serving", Map.of(), 8, "inference-critical", 2000));
    assertThat(d.tier()).isEqualTo("inference-critical");
    assertThat(d.record())
        .first()
        .extracting(Contribution::rule)
        .isEqualTo("tiers[0] inference-critical: priorityClassName=inference-critical");
  }

  @Test
  void matchesAPriorityRange() {
    assertThat(decide(Policies.pod("serving", Map.of(), 1, null, 5000)).tier())
        .isEqualTo("inference");
  }

  @Test
  void matchesANamespace() {
    assertThat(decide(Policies.pod("evals", Map.of(), 1, null, 10)).tier()).isEqualTo("batch");
  }

  @Test
  void fallsBackToTheDefaultTierAndSaysSo() {
    Decision d = decide(Policies.pod("other", Map.of(), 1, null, null));
    assertThat(d.tier()).isEqualTo("inference");
    assertThat(d.record()).first().extracting(Contribution::rule).isEqualTo("defaultTier");
  }

  @Test
  void matchesLabelsAndAnnotationsExactly() {
    var m =
        new io.kse.policy.model.TierMatch(
            java.util.List.of(),
            OptionalInt.empty(),
            OptionalInt.empty(),
            java.util.List.of(),
            Map.of("app", "llm"),
            Map.of("team", "a"));
    PodFacts yes =
        new PodFacts(
            "n",
            "p",
            "u",
            Map.of("app", "llm"),
            Map.of("team", "a"),
            Optional.empty(),
            OptionalInt.empty(),
            Optional.empty(),
            0,
            0,
            Map.of(),
            OptionalLong.empty());
    PodFacts no =
        new PodFacts(
            "n",
            "p",
            "u",
            Map.of("app", "llm"),
            Map.of("team", "b"),
            Optional.empty(),
            OptionalInt.empty(),
            Optional.empty(),
            0,
            0,
            Map.of(),
            OptionalLong.empty());
    assertThat(TierMatching.matches(m, yes)).contains("label app=llm, annotation team=a");
    assertThat(TierMatching.matches(m, no)).isEmpty();
  }

  @Test
  void translatesResourcesAndTierSettings() {
    JobSpec j = placed(Policies.pod("serving", Map.of(), 4, null, 5000));
    assertThat(j.partition()).contains("inference");
    assertThat(j.qos()).contains("inference");
    assertThat(j.account()).contains("serving");
    assertThat(j.cpusPerNode()).isEqualTo(4);
    assertThat(j.memoryPerNodeMb()).isEqualTo(16384);
    assertThat(j.gresPerNode()).contains("gpu:h100:4");
    assertThat(j.nodes()).isEqualTo(1);
    assertThat(j.timeLimitMinutes()).isEmpty();
    assertThat(j.preempting()).isTrue();
  }

  // ---- one owner per GPU ------------------------------------------------------------------

  private static String said(Decision d) {
    return d.record().stream()
        .filter(c -> c.rule().equals("gpu ownership"))
        .map(Contribution::effect)
        .findFirst()
        .orElse("(nothing said)");
  }

  @Test
  void aDevicePluginPodTakesAWholeNodeByDefault() {
    Decision d = decide(Policies.pod("serving", Map.of(), 2, null, 5000));
    assertThat(((Decision.Place) d).job().exclusive()).isTrue();
    assertThat(((Decision.Place) d).job().gresPerNode()).contains("gpu:h100:2");
    assertThat(said(d)).startsWith("whole node: the device plugin, not Slurm, picks the pod's 2");
  }

  @Test
  void aDraPodMayTakePartOfANode() {
    Decision d = decide(Policies.pod("serving", Map.of(), 0, null, 5000).withDraGpus(4));
    JobSpec j = ((Decision.Place) d).job();
    assertThat(j.exclusive()).isFalse();
    assertThat(j.gresPerNode()).contains("gpu:h100:4");
    assertThat(said(d)).startsWith("DRA: the extender allocates the pod's ResourceClaims");
  }

  @Test
  void aPodAskingGpusBothWaysIsRefusedNamingBoth() {
    Decision d = decide(Policies.pod("serving", Map.of(), 2, null, 5000).withDraGpus(4));
    assertThat(d).isInstanceOf(Decision.Reject.class);
    assertThat(((Decision.Reject) d).reason())
        .contains("nvidia.com/gpu (2, picked by the device plugin)")
        .contains("through ResourceClaims (4)");
  }

  @Test
  void aWholeNodeByCountOrADeclaredUnsharedTierNeedsNoExclusivePlaceholder() {
    PlacementPolicy p =
        new PlacementPolicy(
            PolicyParser.parse(
                """
                apiVersion: kse.io/v1alpha1
                kind: PlacementPolicy
                cluster: {preemptMode: partition, gpuType: h100, gpusPerNode: 8}
                defaultTier: inference
                tiers:
                  - name: dedicated
                    match: {namespaces: [dedicated]}
                    slurm: {partition: serving-only}
                    riskGpuOverlapWithSlurmJobs: true
                  - name: inference
                    slurm: {partition: inference}
                """,
                "test"));
    Decision whole = p.decide(Policies.pod("serving", Map.of(), 8, null, 5000), ledger, NOW);
    assertThat(((Decision.Place) whole).job().exclusive()).isFalse();
    assertThat(said(whole)).startsWith("whole node: the pod asks all 8 GPUs of a node");
    Decision part = p.decide(Policies.pod("serving", Map.of(), 4, null, 5000), ledger, NOW);
    assertThat(((Decision.Place) part).job().exclusive()).isTrue();
    Decision declared = p.decide(Policies.pod("dedicated", Map.of(), 4, null, 5000), ledger, NOW);
    assertThat(((Decision.Place) declared).job().exclusive()).isFalse();
    assertThat(said(declared)).startsWith("declared unshared: tier dedicated");
  }

  @Test
  void roundsCpuUpAndMapsExtendedResources() {
    PodFacts pod =
        new PodFacts(
            "serving",
            "p",
            "u",
            Map.of(),
            Map.of(),
            Optional.empty(),
            OptionalInt.of(5000),
            Optional.empty(),
            1500,
            1,
            Map.of(PodFacts.GPU, 2L, "example.com/fabric", 1L),
            OptionalLong.empty());
    JobSpec j = placed(pod);
    assertThat(j.cpusPerNode()).isEqualTo(2);
    assertThat(j.memoryPerNodeMb()).isEqualTo(1);
    assertThat(j.gresPerNode()).contains("gpu:h100:2,fabric:1");
  }

  @Test
  void anActiveDeadlineShortensTheTimeLimit() {
    PodFacts pod =
        new PodFacts(
            "batch",
            "p",
            "u",
            Map.of(),
            Map.of(),
            Optional.empty(),
            OptionalInt.empty(),
            Optional.empty(),
            1000,
            0,
            Map.of(),
            OptionalLong.of(601));
    assertThat(placed(pod).timeLimitMinutes()).hasValue(11);
  }

  @Test
  void nvlinkDomainBecomesAOneOfFeatureConstraint() {
    JobSpec j =
        placed(
            Policies.pod(
                "serving",
                Map.of(WellKnown.TOPOLOGY, "nvlink-domain", WellKnown.NODES, "4"),
                8,
                null,
                5000));
    assertThat(j.constraint()).contains("[nvl-0|nvl-1|nvl-2|nvl-3|nvl-4|nvl-5|nvl-6|nvl-7]");
    assertThat(j.nodes()).isEqualTo(4);
  }

  @Test
  void rejectsImpossibleTopologyRequestsWithAReason() {
    assertReject(Map.of(WellKnown.TOPOLOGY, "ring"), "kse.io/topology=ring is not a topology");
    assertReject(
        Map.of(WellKnown.SWITCHES, "1@5m"), "needs switch requests (cluster.switches: true");
    assertReject(Map.of(WellKnown.SEGMENT, "2"), "needs topology/block");
    assertReject(Map.of(WellKnown.NODES, "0"), "kse.io/nodes=0 is out of range");
    assertReject(Map.of(WellKnown.NODES, "two"), "kse.io/nodes=two is not a whole number");
  }

  @Test
  void aPodMaySpanSeveralNodesOnlyWhereOverridesAllowAndItsTierPermits() {
    // any pod owner made one 8-GPU pod hold 4 nodes x 8 GPUs
    String yaml = Policies.example("minimal.yaml");
    Map<String, String> four = Map.of(WellKnown.NODES, "4");
    Decision d =
        new PlacementPolicy(PolicyParser.parse(yaml, "x"))
            .decide(Policies.pod("a", four, 8, null, null), ledger, NOW);
    assertThat(d)
        .isInstanceOfSatisfying(
            Decision.Reject.class,
            r -> assertThat(r.reason()).contains("kse.io/nodes is not allowed in namespace a"));
    String granted =
        yaml
            + "overrides:\n  - {namespaces: [other], keys: [qos]}\n"
            + "  - {namespaces: [\"team-*\"], keys: [nodes]}\n";
    PlacementPolicy p = new PlacementPolicy(PolicyParser.parse(granted, "x"));
    assertThat(p.decide(Policies.pod("team-a", four, 8, null, null), ledger, NOW))
        .isInstanceOfSatisfying(
            Decision.Reject.class,
            r ->
                assertThat(r.reason())
                    .isEqualTo(
                        "kse.io/nodes=4 is more than the 1 node(s) tier inference allows"
                            + " (tiers[].maxNodes)"));
    PlacementPolicy roomy =
        new PlacementPolicy(
            PolicyParser.parse(
                granted.replace(
                    "    mayPreempt: [training]\n",
                    "    mayPreempt: [training]\n    maxNodes: 4\n"),
                "x"));
    assertThat(roomy.decide(Policies.pod("team-a", four, 8, null, null), ledger, NOW))
        .isInstanceOfSatisfying(
            Decision.Place.class, pl -> assertThat(pl.job().nodes()).isEqualTo(4));
  }

  @Test
  void switchesAndSegmentsWhereTheClusterHasThem() {
    String yaml =
        Policies.example("minimal.yaml")
                .replace("gpuGres: gpu", "gpuGres: gpu\n  switches: true\n  blocks: true")
                .replace(
                    "    mayPreempt: [training]\n", "    mayPreempt: [training]\n    maxNodes: 4\n")
            + "overrides: {namespaces: [a], keys: [nodes]}\n";
    PlacementPolicy p = new PlacementPolicy(PolicyParser.parse(yaml, "x"));
    Decision d =
        p.decide(
            Policies.pod(
                "a", Map.of(WellKnown.SWITCHES, "1@2m", WellKnown.NODES, "2"), 8, null, null),
            ledger,
            NOW);
    assertThat(d)
        .isInstanceOfSatisfying(
            Decision.Place.class,
            pl ->
                assertThat(pl.job().topology())
                    .isEqualTo(new TopologyRequest.Switches(1, java.time.Duration.ofMinutes(2))));
    d =
        p.decide(
            Policies.pod("a", Map.of(WellKnown.SEGMENT, "2", WellKnown.NODES, "4"), 8, null, null),
            ledger,
            NOW);
    assertThat(d)
        .isInstanceOfSatisfying(
            Decision.Place.class,
            pl -> assertThat(pl.job().topology()).isEqualTo(new TopologyRequest.Segment(2)));
    d =
        p.decide(
            Policies.pod("a", Map.of(WellKnown.SEGMENT, "3", WellKnown.NODES, "4"), 8, null, null),
            ledger,
            NOW);
    assertThat(d)
        .isInstanceOfSatisfying(
            Decision.Reject.class, r -> assertThat(r.reason()).contains("does not divide"));
    d =
        p.decide(
            Policies.pod("a", Map.of(WellKnown.SWITCHES, "3", WellKnown.NODES, "2"), 8, null, null),
            ledger,
            NOW);
    assertThat(d)
        .isInstanceOfSatisfying(
            Decision.Reject.class, r -> assertThat(r.reason()).contains("more switches than"));
  }

  @Test
  void overridesApplyOnlyWhereThePolicyAllowsThem() {
    JobSpec j =
        placed(
            Policies.pod(
                "research",
                Map.of(WellKnown.QOS, "batch", WellKnown.TIME_LIMIT, "2h"),
                1,
                null,
                5000));
    assertThat(j.qos()).contains("batch");
    assertThat(j.timeLimitMinutes()).hasValue(120);
    assertThat(
            decide(Policies.pod("research", Map.of(WellKnown.TIER, "batch"), 1, null, 5000)).tier())
        .isEqualTo("batch");

    Decision denied =
        decide(Policies.pod("serving", Map.of(WellKnown.QOS, "batch"), 1, null, 5000));
    assertThat(denied)
        .isInstanceOfSatisfying(
            Decision.Reject.class,
            r ->
                assertThat(r.reason())
                    .isEqualTo(
                        "annotation kse.io/qos is not allowed in namespace serving (policy overrides.namespaces / overrides.keys)"));
    Decision keyNotAllowed =
        decide(Policies.pod("research", Map.of(WellKnown.PARTITION, "x"), 1, null, 5000));
    assertThat(keyNotAllowed).isInstanceOf(Decision.Reject.class);
    Decision unknownTier =
        decide(Policies.pod("research", Map.of(WellKnown.TIER, "gold"), 1, null, 5000));
    assertThat(unknownTier)
        .isInstanceOfSatisfying(
            Decision.Reject.class, r -> assertThat(r.reason()).contains("names no tier"));
  }

  @Test
  void aSpentBudgetSwitchesToTheNonPreemptingFallback() {
    PodFacts pod = Policies.pod("serving", Map.of(), 8, null, 5000);
    assertThat(placed(pod).preempting()).isTrue();
    ledger.record("inference", 32, 4, NOW.minus(Duration.ofMinutes(5)));
    JobSpec j = placed(pod);
    assertThat(j.preempting()).isFalse();
    assertThat(j.qos()).contains("inference-nopreempt");
    assertThat(decide(pod).record())
        .anySatisfy(
            c ->
                assertThat(c.effect())
                    .contains(
                        "budget of tier inference used up (32/32 GPUs, 4/4 nodes in 00:10:00)"));
    // the window slides: 11 minutes later the budget is back
    JobSpec later =
        ((Decision.Place) lab.decide(pod, ledger, NOW.plus(Duration.ofMinutes(6)))).job();
    assertThat(later.preempting()).isTrue();
  }

  @Test
  void budgetUseIsTheLargerShareInTheWindow() {
    assertThat(lab.budgetUse(ledger, NOW))
        .containsExactly(
            java.util.Map.entry("inference", 0.0), java.util.Map.entry("inference-critical", 0.0));
    ledger.record("inference", 8, 2, NOW.minus(Duration.ofMinutes(5)));
    // 8 of 32 GPUs, 2 of 4 nodes: the nodes are the nearer limit
    assertThat(lab.budgetUse(ledger, NOW)).containsEntry("inference", 0.5);
    ledger.record("inference", 24, 2, NOW.minus(Duration.ofMinutes(1)));
    assertThat(lab.budgetUse(ledger, NOW)).containsEntry("inference", 1.0);
    // the window is 10 minutes: the first entry slides out, 24/32 GPUs and 2/4 nodes stay
    assertThat(lab.budgetUse(ledger, NOW.plus(Duration.ofMinutes(6))))
        .containsEntry("inference", 0.75);
  }

  @Test
  void dryRunDecidesButNeverPreempts() {
    String yaml =
        Policies.example("lab.yaml")
            .replace("dryRun: false", "dryRun: true")
            .replace(
                "      timeLimit: 4h", "      timeLimit: 4h\n      fallbackQos: batch-nopreempt");
    PlacementPolicy p = new PlacementPolicy(PolicyParser.parse(yaml, "x"));
    Decision d = p.decide(Policies.pod("serving", Map.of(), 8, null, 5000), ledger, NOW);
    JobSpec j = ((Decision.Place) d).job();
    assertThat(j.preempting()).isFalse();
    assertThat(j.qos()).contains("inference-nopreempt");
    assertThat(d.record())
        .anySatisfy(c -> assertThat(c.effect()).startsWith("dry run (preemption.dryRun)"));
  }

  private void assertReject(Map<String, String> annotations, String reason) {
    Decision d = decide(Policies.pod("serving", annotations, 8, null, 5000));
    assertThat(d)
        .isInstanceOfSatisfying(
            Decision.Reject.class, r -> assertThat(r.reason()).contains(reason));
  }

  // ---- groups ------------------------------------------------------------------------------

  private static PodFacts member(String name, long gpus, int priority) {
    return named(Policies.pod("serving", Map.of(), gpus, null, priority), name);
  }

  /** The same pod under another name and UID: a group's members. */
  private static PodFacts named(PodFacts p, String name) {
    return new PodFacts(
        p.namespace(),
        name,
        "uid-" + name,
        p.labels(),
        p.annotations(),
        p.priorityClassName(),
        p.priority(),
        p.owner(),
        p.cpuMillis(),
        p.memoryBytes(),
        p.extendedResources(),
        p.activeDeadlineSeconds(),
        p.draGpus(),
        p.nodeSelector(),
        p.draGpuShares());
  }

  private Decision group(Optional<String> topologyKey, PodFacts... members) {
    return lab.decideGroup(
        new GroupFacts(
            "lws/llm/0",
            "LeaderWorkerSet llm group 0",
            members.length,
            List.of(members),
            topologyKey,
            topologyKey.isPresent(),
            java.util.Set.of("nvl-1", "nvl-3")),
        ledger,
        NOW);
  }

  @Test
  void aGroupIsOneJobWithOneNodePerMember() {
    Decision d = group(Optional.empty(), member("l", 8, 5000), member("w", 8, 5000));
    assertThat(d).isInstanceOf(Decision.Place.class);
    JobSpec job = ((Decision.Place) d).job();
    assertThat(job.nodes()).isEqualTo(2);
    assertThat(job.gresPerNode()).contains("gpu:h100:8");
    assertThat(d.record()).anySatisfy(c -> assertThat(c.rule()).startsWith("group lws/llm/0"));
  }

  @Test
  void membersAskingDifferentResourcesGetTheLargestOnEveryNode() {
    Decision d = group(Optional.empty(), member("l", 2, 5000), member("w", 8, 5000));
    assertThat(((Decision.Place) d).job().gresPerNode()).contains("gpu:h100:8");
    assertThat(d.record()).anySatisfy(c -> assertThat(c.effect()).contains("largest request"));
  }

  @Test
  void membersDisagreeingOnTheTierAreRefused() {
    Decision d =
        group(
            Optional.empty(),
            member("l", 8, 5000),
            Policies.pod("serving", Map.of(), 8, "inference-critical", null));
    assertThat(d)
        .isInstanceOfSatisfying(
            Decision.Reject.class,
            r ->
                assertThat(r.reason())
                    .contains("disagree on their tier")
                    .contains("l is in tier inference"));
  }

  @Test
  void aGroupLargerThanItsTierAllowsIsRefused() {
    PodFacts[] five = new PodFacts[5];
    for (int i = 0; i < 5; i++) {
      five[i] = member("m" + i, 8, 5000);
    }
    assertThat(group(Optional.empty(), five))
        .isInstanceOfSatisfying(
            Decision.Reject.class,
            r -> assertThat(r.reason()).contains("has 5 members").contains("tiers[].maxNodes"));
  }

  @Test
  void aGroupLargerThanAnNvlinkDomainIsRefusedInOurWords() {
    PodFacts[] five = new PodFacts[5];
    for (int i = 0; i < 5; i++) { // tier inference-critical, up to 8 nodes: the domain is the limit
      five[i] = named(Policies.pod("serving", Map.of(), 8, "inference-critical", null), "m" + i);
    }
    assertThat(group(Optional.of("nvidia.com/gpu.clique"), five))
        .isInstanceOfSatisfying(
            Decision.Reject.class,
            r ->
                assertThat(r.reason())
                    .contains("needs 5 nodes in one NVLink domain, but a domain has only 4"));
  }

  @Test
  void aKnownTopologyKeyAsksForOneNvlinkDomain() {
    Decision d =
        group(Optional.of("nvidia.com/gpu.clique"), member("l", 8, 5000), member("w", 8, 5000));
    assertThat(((Decision.Place) d).job().constraint())
        .as("exclusive: the domains other groups hold are left out")
        .contains("[nvl-0|nvl-2|nvl-4|nvl-5|nvl-6|nvl-7]");
    assertThat(d.record())
        .anySatisfy(
            c -> assertThat(c.rule()).isEqualTo("group topology key nvidia.com/gpu.clique"));
  }

  @Test
  void kseNodesOnAGroupMemberIsRefused() {
    PodFacts l = member("l", 8, 5000);
    PodFacts withNodes =
        new PodFacts(
            l.namespace(),
            "l",
            "u",
            Map.of(),
            Map.of(WellKnown.NODES, "2"),
            l.priorityClassName(),
            l.priority(),
            l.owner(),
            1000,
            1L << 30,
            l.extendedResources(),
            OptionalLong.empty());
    assertThat(group(Optional.empty(), withNodes, member("w", 8, 5000)))
        .isInstanceOfSatisfying(
            Decision.Reject.class,
            r -> assertThat(r.reason()).contains("cannot be set on a member of a group"));
  }
}
