package io.kse.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.kse.policy.model.ClusterSpec;
import io.kse.policy.model.Policy;
import java.time.Duration;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class PolicyParserTest {
  private static final String HEAD =
      """
      apiVersion: kse.io/v1alpha1
      kind: PlacementPolicy
      cluster: {preemptMode: partition}
      """;

  @Test
  void theExamplesValidate() {
    Policy lab = Policies.lab();
    assertThat(lab.tiers())
        .extracting(t -> t.name())
        .containsExactly("inference-critical", "inference", "batch", "training");
    assertThat(lab.cluster().preemptMode()).isEqualTo(ClusterSpec.PreemptMode.QOS);
    assertThat(lab.preemption().minRuntime()).containsEntry("training", Duration.ofMinutes(15));
    assertThat(lab.tier("batch").orElseThrow().slurm().timeLimitMinutes()).hasValue(240);
    assertThat(Policies.minimal().defaultTier()).isEqualTo("inference");
  }

  static Stream<Arguments> invalid() {
    String tiers =
        """
        defaultTier: a
        tiers:
          - name: a
            slurm: {partition: p}
            mayPreempt: [b]
          - name: b
            slurm: {partition: q}
            preemptible: true
        """;
    return Stream.of(
        Arguments.of(
            "missing apiVersion",
            "kind: PlacementPolicy\ncluster: {preemptMode: qos}\n" + tiers,
            "apiVersion: required; this version reads kse.io/v1alpha1"),
        Arguments.of(
            "wrong apiVersion",
            HEAD.replace("v1alpha1", "v2") + tiers,
            "apiVersion: unsupported \"kse.io/v2\""),
        Arguments.of(
            "wrong kind",
            HEAD.replace("PlacementPolicy", "Policy") + tiers,
            "kind: must be PlacementPolicy, got \"Policy\""),
        Arguments.of(
            "unknown top-level key",
            HEAD + "tierz: []\n" + tiers,
            "tierz: unknown key, did you mean \"tiers\"?"),
        Arguments.of(
            "unknown preempt mode",
            HEAD.replace("partition}", "prio}") + tiers,
            "cluster.preemptMode: unknown value \"prio\"; use one of [partition, qos]"),
        Arguments.of(
            "no tiers", HEAD + "defaultTier: a\n", "tiers: required: a list of at least one tier"),
        Arguments.of(
            "unknown default tier",
            HEAD + tiers.replace("defaultTier: a", "defaultTier: x"),
            "defaultTier: unknown tier \"x\""),
        Arguments.of(
            "typo in mayPreempt",
            HEAD + tiers.replace("mayPreempt: [b]", "mayPreempt: [c]"),
            "tiers[0].mayPreempt[0]: unknown tier \"c\""),
        Arguments.of(
            "preempting itself",
            HEAD + tiers.replace("mayPreempt: [b]", "mayPreempt: [a]"),
            "tiers[0].mayPreempt[0]: tier \"a\" may not preempt itself"),
        Arguments.of(
            "preempting a higher tier",
            HEAD + tiers + "    mayPreempt: [a]\n",
            "tiers[1].mayPreempt[0]: tier \"b\" may not preempt the higher tier \"a\""),
        Arguments.of(
            "a cycle",
            HEAD + tiers + "    mayPreempt: [a]\n",
            "tiers: preemption cycle: a -> b -> a"),
        Arguments.of(
            "victim not preemptible",
            HEAD + tiers.replace("preemptible: true", "preemptible: false"),
            "tiers[0].mayPreempt[0]: tier \"b\" is not preemptible"),
        Arguments.of(
            "duplicate tier",
            HEAD + tiers.replace("name: b", "name: a"),
            "tiers[1].name: duplicate tier \"a\""),
        Arguments.of(
            "bad tier name",
            HEAD + tiers.replace("name: b", "name: B_1"),
            "tiers[1].name: required: a lower-case DNS label, got \"B_1\""),
        Arguments.of(
            "no partition or qos",
            HEAD + tiers.replace("slurm: {partition: q}", "slurm: {account: x}"),
            "tiers[1].slurm: needs a partition or a qos"),
        Arguments.of(
            "qos mode needs qos",
            HEAD.replace("partition}", "qos}") + tiers,
            "tiers[0].slurm.qos: required when cluster.preemptMode is qos"),
        Arguments.of(
            "bad time limit",
            HEAD + tiers.replace("{partition: q}", "{partition: q, timeLimit: 5 minutes}"),
            "tiers[1].slurm.timeLimit: not a duration: '5 minutes'"),
        Arguments.of(
            "wrong type",
            HEAD + tiers.replace("preemptible: true", "preemptible: yes please"),
            "tiers[1].preemptible: expected true or false, got \"yes please\""),
        Arguments.of(
            "match-all match",
            HEAD
                + tiers.replace(
                    "    slurm: {partition: p}", "    match: {}\n    slurm: {partition: p}"),
            "tiers[0].match: matches every pod"),
        Arguments.of(
            "inverted priority range",
            HEAD
                + tiers.replace(
                    "    slurm: {partition: p}",
                    "    match: {priorityRange: {min: 10, max: 1}}\n    slurm: {partition: p}"),
            "tiers[0].match.priorityRange: min 10 is greater than max 1"),
        Arguments.of(
            "nvlink without domains",
            HEAD + tiers.replace("mayPreempt: [b]", "mayPreempt: [b]\n    topology: nvlink-domain"),
            "tiers[0].topology: nvlink-domain needs cluster.nvlinkDomainFeatures"),
        Arguments.of(
            "unknown topology",
            HEAD + tiers.replace("mayPreempt: [b]", "mayPreempt: [b]\n    topology: ring"),
            "tiers[0].topology: unknown topology \"ring\""),
        Arguments.of(
            "budget for unknown tier",
            HEAD + tiers + "preemption:\n  budgets:\n    - {tier: z, maxGpus: 8, window: 10m}\n",
            "preemption.budgets[0].tier: unknown tier \"z\""),
        Arguments.of(
            "budget without limits",
            HEAD + tiers + "preemption:\n  budgets:\n    - {tier: a, window: 10m}\n",
            "preemption.budgets[0]: set maxGpus, maxNodes or both"),
        Arguments.of(
            "budget without window",
            HEAD + tiers + "preemption:\n  budgets:\n    - {tier: a, maxGpus: 8}\n",
            "preemption.budgets[0].window: required"),
        Arguments.of(
            "two budgets for a tier",
            HEAD
                + tiers.replace(
                    "slurm: {partition: p}", "slurm: {partition: p, fallbackPartition: f}")
                + "preemption:\n  budgets:\n    - {tier: a, maxGpus: 8, window: 1m}\n    - {tier: a, maxGpus: 9, window: 1h}\n",
            "preemption.budgets[1].tier: tier \"a\" already has a budget"),
        Arguments.of(
            "budget without fallback",
            HEAD + tiers + "preemption:\n  budgets:\n    - {tier: a, maxGpus: 8, window: 10m}\n",
            "tiers[0].slurm: needs fallbackPartition or fallbackQos"),
        Arguments.of(
            "dry run without fallback",
            HEAD + tiers + "preemption:\n  dryRun: true\n",
            "because preemption.dryRun is on"),
        Arguments.of(
            "min runtime of a non-preemptible tier",
            HEAD + tiers + "preemption:\n  minRuntime: {a: 5m}\n",
            "preemption.minRuntime.a: tier \"a\" is not preemptible"),
        Arguments.of(
            "bad min runtime",
            HEAD + tiers + "preemption:\n  minRuntime: {b: soon}\n",
            "preemption.minRuntime.b: not a duration: 'soon'"),
        Arguments.of(
            "unknown override key",
            HEAD + tiers + "overrides: {namespaces: [r], keys: [gpus]}\n",
            "overrides.keys[0]: unknown override \"gpus\""),
        Arguments.of("not YAML", "a: [b", "not valid YAML"),
        Arguments.of("not a mapping", "- a\n- b\n", "$: expected a mapping at the top level"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("invalid")
  void reportsTheProblemWithItsPath(String name, String yaml, String expected) {
    PolicyValidationException e =
        catchThrowableOfType(
            PolicyValidationException.class, () -> PolicyParser.parse(yaml, "test.yaml"));
    assertThat(e).as("should be rejected").isNotNull();
    assertThat(e.problems()).anySatisfy(p -> assertThat(p).contains(expected));
    assertThat(e.getMessage()).startsWith("invalid policy test.yaml:");
  }

  @Test
  void reportsEveryProblemAtOnce() {
    String yaml =
        HEAD
            + """
        defaultTier: nope
        tiers:
          - name: a
            slurm: {partition: p, colour: red}
            mayPreempt: [trainng]
        """;
    assertThatThrownBy(() -> PolicyParser.parse(yaml, "x"))
        .isInstanceOfSatisfying(
            PolicyValidationException.class,
            e ->
                assertThat(e.problems())
                    .containsExactlyInAnyOrder(
                        "tiers[0].slurm.colour: unknown key",
                        "defaultTier: unknown tier \"nope\"",
                        "tiers[0].mayPreempt[0]: unknown tier \"trainng\""));
  }
}
