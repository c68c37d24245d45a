package io.kse.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kse.policy.model.TpuSlices;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class SliceRulesTest {
  private static final Instant NOW = Instant.parse("2026-11-28T10:00:00Z");
  private final PlacementPolicy tpu =
      new PlacementPolicy(PolicyParser.parse(Policies.example("tpu.yaml"), "tpu.yaml"));
  private final PreemptionLedger ledger = new PreemptionLedger();

  private static PodFacts host(String name, long chips, String type, String topology) {
    PodFacts p =
        Policies.withResources(
            Policies.pod("serving", Map.of(), 0, null, null),
            Map.of(TpuSlices.GKE_RESOURCE, chips));
    Map<String, String> selector = new java.util.HashMap<>();
    if (type != null) {
      selector.put(TpuSlices.GKE_ACCELERATOR_LABEL, type);
    }
    if (topology != null) {
      selector.put(TpuSlices.GKE_TOPOLOGY_LABEL, topology);
    }
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
            0,
            Map.of(),
            0)
        .withNodeSelector(selector);
  }

  private static List<PodFacts> hosts(int n, String topology) {
    List<PodFacts> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      out.add(host("w" + i, 4, "tpu-v5p-slice", topology));
    }
    return out;
  }

  private Decision group(List<PodFacts> members, Optional<String> topologyKey) {
    return tpu.decideGroup(
        new GroupFacts(
            "lws/tpu/0",
            "LeaderWorkerSet tpu group 0",
            members.size(),
            members,
            topologyKey,
            false,
            java.util.Set.of()),
        ledger,
        NOW);
  }

  private static JobSpec placed(Decision d) {
    assertThat(d).isInstanceOf(Decision.Place.class);
    return ((Decision.Place) d).job();
  }

  private static String refused(Decision d) {
    assertThat(d).isInstanceOf(Decision.Reject.class);
    return ((Decision.Reject) d).reason();
  }

  @Test
  void aFourHostSliceIsOneJobOfOneSegmentOnTheSlicesFeature() {
    Decision d = group(hosts(4, "2x2x4"), Optional.empty());
    JobSpec job = placed(d);
    assertThat(job.nodes()).isEqualTo(4);
    assertThat(job.gresPerNode()).contains("tpu:4");
    assertThat(job.constraint()).contains("tpu-v5p-2x2x4");
    assertThat(job.topology()).isEqualTo(new TopologyRequest.Segment(4));
    assertThat(d.record())
        .anySatisfy(
            c ->
                assertThat(c.effect())
                    .contains("one tpu-v5p-slice slice of 2x2x4")
                    .contains("16 chips on 4 host(s)"));
  }

  @Test
  void twoSlicesWorthOfMembersAreAMultisliceOfOneSegmentEach() {
    Decision d = group(hosts(8, "2x2x4"), Optional.empty());
    JobSpec job = placed(d);
    assertThat(job.nodes()).isEqualTo(8);
    assertThat(job.topology()).isEqualTo(new TopologyRequest.Segment(4));
    assertThat(d.record()).anySatisfy(c -> assertThat(c.effect()).contains("multislice of 2"));
  }

  @Test
  void aSingleHostSliceIsOnePodWithoutASegment() {
    JobSpec job = placed(tpu.decide(host("one", 4, "tpu-v5p-slice", "2x2x1"), ledger, NOW));
    assertThat(job.nodes()).isEqualTo(1);
    assertThat(job.topology()).isEqualTo(TopologyRequest.NONE);
    assertThat(job.gresPerNode()).contains("tpu:4");
  }

  @Test
  void aGroupOfSingleHostSlicesNeedsNoSegment() {
    JobSpec job = placed(group(hosts(3, "2x2x1"), Optional.empty()));
    assertThat(job.nodes()).isEqualTo(3);
    assertThat(job.topology()).isEqualTo(TopologyRequest.NONE);
  }

  @Test
  void aTopologyThatDoesNotParseIsRefusedNamingIt() {
    assertThat(refused(group(hosts(4, "2x2xq"), Optional.empty())))
        .contains("cloud.google.com/gke-tpu-topology=2x2xq")
        .contains("not a slice topology");
  }

  @Test
  void aTopologyTheClusterHasNoBlockForIsRefused() {
    assertThat(refused(group(hosts(16, "4x4x4"), Optional.empty())))
        .contains("the cluster has no tpu-v5p-slice slice of topology 4x4x4")
        .contains("[2x2x1, 2x2x4, 2x4x4]");
  }

  @Test
  void anUnknownAcceleratorTypeIsRefused() {
    List<PodFacts> m = List.of(host("a", 4, "tpu-v9-slice", "2x2x4"));
    assertThat(refused(tpu.decide(m.get(0), ledger, NOW)))
        .contains("gke-tpu-accelerator=tpu-v9-slice is no TPU type")
        .contains("tpu-v5p-slice");
  }

  @ParameterizedTest
  @ValueSource(longs = {2, 8})
  void chipsOtherThanTheHostsAreRefused(long chips) {
    List<PodFacts> m = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      m.add(host("w" + i, chips, "tpu-v5p-slice", "2x2x4"));
    }
    assertThat(refused(group(m, Optional.empty())))
        .contains("asks " + chips + " google.com/tpu")
        .contains("gives each of its 4 host(s) 4 chips");
  }

  @Test
  void aSinglePodCannotSpanAMultiHostSlice() {
    assertThat(refused(tpu.decide(host("one", 4, "tpu-v5p-slice", "2x2x4"), ledger, NOW)))
        .contains("spans 4 hosts, one pod per host: run it as a group of 4");
  }

  @Test
  void aGroupThatIsNotWholeSlicesIsRefused() {
    assertThat(refused(group(hosts(6, "2x2x4"), Optional.empty())))
        .contains("6 members, which is not a whole number of tpu-v5p-slice 2x2x4 slices of 4");
  }

  @Test
  void aMultisliceOfMixedTypesIsRefused() {
    List<PodFacts> m = new ArrayList<>(hosts(4, "2x2x4"));
    m.addAll(hosts(4, "2x4x4"));
    assertThat(refused(group(m, Optional.empty())))
        .contains("ask different TPU slices")
        .contains("2x2x4")
        .contains("2x4x4");
  }

  @Test
  void aMemberAskingNoTpuInATpuGroupIsRefused() {
    List<PodFacts> m = new ArrayList<>(hosts(3, "2x2x4"));
    m.add(Policies.pod("serving", Map.of(), 0, null, null));
    assertThat(refused(group(m, Optional.empty()))).contains("asks no TPU");
  }

  @Test
  void aPodNamingNoSliceIsToldWhichLabelsToSet() {
    assertThat(refused(tpu.decide(host("one", 4, "tpu-v5p-slice", null), ledger, NOW)))
        .contains("names no slice")
        .contains("cloud.google.com/gke-tpu-topology is missing");
  }

  @Test
  void aPolicyWithoutTpusRefusesATpuPod() {
    PlacementPolicy minimal = new PlacementPolicy(Policies.minimal());
    assertThat(refused(minimal.decide(host("one", 4, "tpu-v5p-slice", "2x2x1"), ledger, NOW)))
        .contains("the policy names no TPU slices (cluster.tpu)");
  }

  @Test
  void withoutClusterTpuAMappedTpuResourceStaysAPlainGres() {
    String yaml =
        Policies.example("minimal.yaml")
            .replace(
                "  gpuGres: gpu", "  gpuGres: gpu\n  extendedResources: {google.com/tpu: tpu}");
    PlacementPolicy plain = new PlacementPolicy(PolicyParser.parse(yaml, "plain.yaml"));
    JobSpec job = placed(plain.decide(host("one", 4, "tpu-v5p-slice", "2x2x4"), ledger, NOW));
    assertThat(job.gresPerNode()).contains("tpu:4");
    assertThat(job.topology()).isEqualTo(TopologyRequest.NONE);
  }

  @Test
  void ourTopologyAnnotationsCannotBeSetOnATpuPod() {
    PodFacts p = host("one", 4, "tpu-v5p-slice", "2x2x1");
    PodFacts annotated =
        new PodFacts(
                p.namespace(),
                p.name(),
                p.uid(),
                p.labels(),
                Map.of(WellKnown.SEGMENT, "1"),
                p.priorityClassName(),
                p.priority(),
                p.owner(),
                p.cpuMillis(),
                p.memoryBytes(),
                p.extendedResources(),
                p.activeDeadlineSeconds())
            .withNodeSelector(p.nodeSelector());
    assertThat(refused(tpu.decide(annotated, ledger, NOW)))
        .contains("annotation kse.io/segment cannot be set on a TPU pod");
  }

  @Test
  void aSliceIsItsGroupsTopologyDomainButAMultisliceIsNot() {
    assertThat(placed(group(hosts(4, "2x2x4"), Optional.of("cloud.google.com/gke-nodepool"))))
        .satisfies(j -> assertThat(j.nodes()).isEqualTo(4));
    assertThat(refused(group(hosts(8, "2x2x4"), Optional.of("cloud.google.com/gke-nodepool"))))
        .contains("its 8 members are 2 slices");
  }

  @Test
  void aMultiHostTopologyNeedsBlocksAtLoad() {
    String yaml = Policies.example("tpu.yaml").replace("blocks: true", "blocks: false");
    assertThatThrownBy(() -> PolicyParser.parse(yaml, "tpu.yaml"))
        .isInstanceOf(PolicyValidationException.class)
        .hasMessageContaining("cluster.tpu.accelerators.tpu-v5p-slice.topologies")
        .hasMessageContaining("2x2x4 spans several hosts")
        .hasMessageContaining("cluster.blocks: true");
  }

  @Test
  void aPolicyTopologyThatDoesNotFillHostsIsRefusedAtLoad() {
    String yaml = Policies.example("tpu.yaml").replace("2x2x1, ", "2x3, ");
    assertThatThrownBy(() -> PolicyParser.parse(yaml, "tpu.yaml"))
        .isInstanceOf(PolicyValidationException.class)
        .hasMessageContaining("topology 2x3 has 6 chips, which do not fill whole hosts of 4");
  }

  /** Seeded: any listed shape and slice count gives slices × hosts nodes, one segment each. */
  @ParameterizedTest
  @ValueSource(longs = {1, 2, 3, 42, 2026})
  void wholeSlicesAlwaysMakeOneSegmentPerSlice(long seed) {
    Random r = new Random(seed);
    String[] shapes = {"2x2x4", "2x4x4"};
    for (int round = 0; round < 20; round++) {
      String shape = shapes[r.nextInt(shapes.length)];
      int hosts = SliceShape.parse(shape).hosts(4);
      int slices = 1 + r.nextInt(16 / hosts);
      JobSpec job = placed(group(hosts(slices * hosts, shape), Optional.empty()));
      assertThat(job.nodes()).isEqualTo(slices * hosts);
      assertThat(job.topology()).isEqualTo(new TopologyRequest.Segment(hosts));
      assertThat(job.constraint()).contains("tpu-v5p-" + shape);
    }
  }
}
