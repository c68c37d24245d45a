package io.kse.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kse.policy.load.PolicyFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Policy files and pods as a careless or hostile author writes them: each gets a clear error, in
 * time linear in its size. (The timeouts only stop a regression from hanging the build: before the
 * fix each of these took minutes or forever.)
 */
class PolicyInputLimitsTest {
  private static final String MINIMAL = Policies.example("minimal.yaml");

  private static PolicyValidationException rejected(String yaml) {
    try {
      PolicyParser.parse(yaml, "p.yaml");
    } catch (PolicyValidationException e) {
      return e;
    }
    throw new AssertionError("accepted");
  }

  @Test
  @Timeout(20)
  void aHugeCommentLineIsRefusedBeforeParsing() {
    String yaml = MINIMAL + "# " + "x".repeat(5_000_000) + "\n";
    assertThat(rejected(yaml).problems())
        .containsExactly(
            "$: "
                + yaml.length()
                + " characters; a policy may have at most "
                + PolicyParser.MAX_CHARS);
    String longLine = MINIMAL + "# " + "x".repeat(PolicyParser.MAX_LINE_CHARS) + "\n";
    assertThat(rejected(longLine).problems().get(0))
        .isEqualTo(
            "line "
                + (MINIMAL.split("\n", -1).length)
                + ": "
                + (PolicyParser.MAX_LINE_CHARS + 2)
                + " characters; a line may have at most "
                + PolicyParser.MAX_LINE_CHARS);
  }

  @Test
  @Timeout(20)
  void manyTiersAndManyUnknownNamesStayCheap() {
    String tiers =
        IntStream.range(0, 10_000)
            .mapToObj(i -> "  - name: t" + i + "\n    mayPreempt: [unknown-" + i + "]\n")
            .collect(Collectors.joining());
    String head =
        "apiVersion: kse.io/v1alpha1\nkind: PlacementPolicy\ncluster: {preemptMode: partition}\n";
    assertThat(rejected(head + "defaultTier: t0\ntiers:\n" + tiers).problems())
        .contains("tiers: 10000 tiers; a policy may have at most " + PolicyParser.MAX_TIERS);
    String names =
        IntStream.range(0, 40_000).mapToObj(i -> "tier-" + i).collect(Collectors.joining(", "));
    String wide =
        head
            + "defaultTier: a\ntiers:\n  - name: a\n    slurm: {partition: a}\n    mayPreempt: ["
            + names.substring(0, 4000)
            + "]\n";
    PolicyValidationException e = rejected(wide);
    assertThat(e.problems()).hasSizeLessThanOrEqualTo(101);
  }

  @Test
  void aSecondYamlDocumentIsAnErrorNotSilentlyIgnored() {
    assertThat(rejected(MINIMAL + "---\napiVersion: kse.io/v1alpha1\n").problems().get(0))
        .contains("more than one YAML document");
    assertThat(PolicyParser.parse("---\n" + MINIMAL, "p.yaml").tiers()).hasSize(2);
  }

  @Test
  void aFileThatIsNotUtf8IsNamedAsSuch(@TempDir Path dir) throws Exception {
    Path f = dir.resolve("latin1.yaml");
    Files.write(
        f, (MINIMAL + "# caf\u00e9\n").getBytes(java.nio.charset.StandardCharsets.ISO_8859_1));
    assertThatThrownBy(() -> PolicyFile.read(f))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("latin1.yaml is not UTF-8 text (invalid byte near offset");
  }

  @Test
  void anExtendedResourceNoGresMapsToIsRefusedByName() {
    PlacementPolicy p = new PlacementPolicy(PolicyParser.parse(MINIMAL, "m"));
    Decision d =
        p.decide(pod(Map.of("example.com/fpga", 1L)), new PreemptionLedger(), Instant.EPOCH);
    assertThat(d).isInstanceOf(Decision.Reject.class);
    assertThat(((Decision.Reject) d).reason())
        .isEqualTo(
            "the pod requests example.com/fpga, which no Slurm GRES maps to: map it in"
                + " cluster.extendedResources, or list it in cluster.kubernetesOnlyResources if"
                + " Kubernetes alone accounts for it");
    PlacementPolicy lenient =
        new PlacementPolicy(
            PolicyParser.parse(
                MINIMAL.replace(
                    "  gpuGres: gpu\n",
                    "  gpuGres: gpu\n  kubernetesOnlyResources: [\"hugepages-*\"]\n"),
                "m"));
    Decision ok =
        lenient.decide(
            pod(Map.of("hugepages-2Mi", 1L << 30)), new PreemptionLedger(), Instant.EPOCH);
    assertThat(ok).isInstanceOf(Decision.Place.class);
    assertThat(((Decision.Place) ok).job().gresPerNode()).contains("gpu:1");
  }

  private static PodFacts pod(Map<String, Long> extra) {
    return Policies.withResources(Policies.pod("serving", Map.of(), 1, null, null), extra);
  }
}
