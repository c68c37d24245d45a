package io.kse.policy.drift;

import static org.assertj.core.api.Assertions.assertThat;

import io.kse.policy.PolicyParser;
import io.kse.policy.model.ClusterSpec;
import io.kse.policy.model.Policy;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class TopologyDriftTest {
  private static final String CLIQUE = "nvidia.com/gpu.clique";
  private static final String ACC = "cloud.google.com/gke-tpu-accelerator";
  private static final String TOPO = "cloud.google.com/gke-tpu-topology";

  private static ClusterSpec cluster() throws Exception {
    Path p = Path.of("examples/tpu.yaml");
    if (!Files.exists(p)) {
      p = Path.of("policy/examples/tpu.yaml");
    }
    String yaml =
        Files.readString(p)
            .replace("  blocks: true", "  blocks: true\n  nvlinkDomainFeatures: [nvl-0, nvl-1]");
    Policy policy = PolicyParser.parse(yaml, "tpu.yaml");
    return policy.cluster();
  }

  /** 4 GPU nodes in two domains, 4 TPU hosts of one 2x2x4 slice: both sides agreeing. */
  private static List<TopologyDrift.SlurmSide> slurm() {
    List<TopologyDrift.SlurmSide> s = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      s.add(new TopologyDrift.SlurmSide("gpu-" + i, Set.of("nvl-" + i / 2), "gpu:h100:8"));
      s.add(new TopologyDrift.SlurmSide("tpu-" + i, Set.of("tpu-v5p-2x2x4"), "tpu:4"));
    }
    return s;
  }

  private static List<TopologyDrift.KubeSide> kube() {
    List<TopologyDrift.KubeSide> k = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      k.add(
          new TopologyDrift.KubeSide(
              "gpu-" + i, Map.of(TopologyDrift.NVLINK_LABEL, "nvl-" + i / 2, CLIQUE, "c" + i / 2)));
      k.add(new TopologyDrift.KubeSide("tpu-" + i, Map.of(ACC, "tpu-v5p-slice", TOPO, "2x2x4")));
    }
    return k;
  }

  private static List<TopologyDrift.KubeSide> replace(
      List<TopologyDrift.KubeSide> k, String name, Map<String, String> labels) {
    List<TopologyDrift.KubeSide> out = new ArrayList<>(k);
    out.replaceAll(n -> n.name().equals(name) ? new TopologyDrift.KubeSide(name, labels) : n);
    return out;
  }

  @Test
  void twoSidesThatAgreeHaveNoDifference() throws Exception {
    assertThat(TopologyDrift.differences(cluster(), slurm(), kube())).isEmpty();
  }

  @Test
  void aRecabledNodeIsNamedWithWhatEachSideSays() throws Exception {
    List<String> d =
        TopologyDrift.differences(
            cluster(),
            slurm(),
            replace(kube(), "gpu-1", Map.of(TopologyDrift.NVLINK_LABEL, "nvl-1", CLIQUE, "c1")));
    assertThat(d)
        .contains(
            "node gpu-1: Kubernetes label kse.io/nvlink-domain=nvl-1, Slurm's NVLink-domain"
                + " feature nvl-0")
        .contains(
            "nodes [gpu-1, gpu-2, gpu-3] share nvidia.com/gpu.clique=c1 in Kubernetes, but Slurm"
                + " has them in NVLink domains [nvl-0, nvl-1]")
        .contains(
            "nodes [gpu-0, gpu-1] are Slurm's NVLink domain nvl-0, but Kubernetes labels them"
                + " nvidia.com/gpu.clique=[c0, c1]");
  }

  @Test
  void eachDifferenceNamesTheNodesItIsAbout() throws Exception {
    List<TopologyDrift.Difference> d =
        TopologyDrift.differencesOf(
            cluster(),
            slurm(),
            replace(kube(), "gpu-1", Map.of(TopologyDrift.NVLINK_LABEL, "nvl-1", CLIQUE, "c1")));
    assertThat(d)
        .extracting(TopologyDrift.Difference::nodes)
        .containsExactly(
            List.of("gpu-1"), List.of("gpu-1", "gpu-2", "gpu-3"), List.of("gpu-0", "gpu-1"));
  }

  @Test
  void aTpuHostLabelledAsAnotherSliceIsNamed() throws Exception {
    List<String> d =
        TopologyDrift.differences(
            cluster(),
            slurm(),
            replace(kube(), "tpu-2", Map.of(ACC, "tpu-v5p-slice", TOPO, "2x4x4")));
    assertThat(d)
        .containsExactly(
            "node tpu-2: Kubernetes labels cloud.google.com/gke-tpu-accelerator=tpu-v5p-slice"
                + " cloud.google.com/gke-tpu-topology=2x4x4 (Slurm feature tpu-v5p-2x4x4), Slurm's"
                + " slice feature tpu-v5p-2x2x4");
  }

  @Test
  void aSliceHostWithoutLabelsOrChipsIsNamed() throws Exception {
    List<TopologyDrift.SlurmSide> s = new ArrayList<>(slurm());
    s.replaceAll(
        n ->
            n.name().equals("tpu-3")
                ? new TopologyDrift.SlurmSide("tpu-3", n.features(), "(null)")
                : n);
    List<String> d = TopologyDrift.differences(cluster(), s, replace(kube(), "tpu-0", Map.of()));
    assertThat(d)
        .contains(
            "node tpu-0: Slurm's slice feature tpu-v5p-2x2x4, no Kubernetes labels"
                + " cloud.google.com/gke-tpu-accelerator / cloud.google.com/gke-tpu-topology")
        .contains("node tpu-3: Kubernetes labels it a TPU host, Slurm's GRES (null) has no tpu");
  }

  @Test
  void nodesOnlyOneSideHasAreNotDrift() throws Exception {
    List<TopologyDrift.KubeSide> k = new ArrayList<>(kube());
    k.add(new TopologyDrift.KubeSide("cpu-1", Map.of(TopologyDrift.NVLINK_LABEL, "nvl-9")));
    assertThat(TopologyDrift.differences(cluster(), slurm(), k)).isEmpty();
  }

  @Test
  void theLabelsSlurmImpliesAreDerivedAndAgreeWithTheCheck() throws Exception {
    ClusterSpec c = cluster();
    TopologyDrift.SlurmSide tpu =
        new TopologyDrift.SlurmSide("tpu-9", Set.of("tpu-v5p-2x4x4"), "tpu:4");
    assertThat(TopologyDrift.derivedLabels(c, tpu))
        .containsEntry(ACC, java.util.Optional.of("tpu-v5p-slice"))
        .containsEntry(TOPO, java.util.Optional.of("2x4x4"))
        .containsEntry(TopologyDrift.NVLINK_LABEL, java.util.Optional.empty());
    TopologyDrift.SlurmSide gpu =
        new TopologyDrift.SlurmSide("gpu-0", Set.of("nvl-1", "other"), "gpu:h100:8");
    assertThat(TopologyDrift.derivedLabels(c, gpu))
        .containsEntry(TopologyDrift.NVLINK_LABEL, java.util.Optional.of("nvl-1"))
        .containsEntry(ACC, java.util.Optional.empty());
    // a node labelled with what was derived has no difference
    Map<String, String> labels = new java.util.HashMap<>();
    TopologyDrift.derivedLabels(c, tpu).forEach((k, v) -> v.ifPresent(x -> labels.put(k, x)));
    assertThat(
            TopologyDrift.differences(
                c, List.of(tpu), List.of(new TopologyDrift.KubeSide("tpu-9", labels))))
        .isEmpty();
  }

  /** Seeded: relabelling any one GPU node to the other domain is always found, naming it. */
  @ParameterizedTest
  @ValueSource(longs = {1, 7, 2026})
  void anyOneRelabelledNodeIsFound(long seed) throws Exception {
    Random r = new Random(seed);
    for (int round = 0; round < 10; round++) {
      int i = r.nextInt(4);
      String other = "nvl-" + (1 - i / 2);
      List<String> d =
          TopologyDrift.differences(
              cluster(),
              slurm(),
              replace(
                  kube(),
                  "gpu-" + i,
                  Map.of(TopologyDrift.NVLINK_LABEL, other, CLIQUE, "c" + i / 2)));
      assertThat(d).anySatisfy(line -> assertThat(line).startsWith("node gpu-" + i + ":"));
    }
  }
}
