package io.kse.policy.drift;

import static org.assertj.core.api.Assertions.assertThat;

import io.kse.policy.PolicyParser;
import io.kse.policy.model.Policy;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

class SlurmDriftTest {
  static Policy example(String name) throws Exception {
    Path p = Path.of("examples", name);
    p = Files.exists(p) ? p : Path.of("policy/examples", name);
    return PolicyParser.parse(Files.readString(p), name);
  }

  static LivePartition part(String name, int tier, String mode) {
    return new LivePartition(name, tier, Optional.ofNullable(mode), Duration.ZERO);
  }

  @Test
  void aMatchingPartitionClusterHasNoDifferences() throws Exception {
    assertThat(
            SlurmDrift.differences(
                example("minimal.yaml"),
                List.of(part("inference", 10, "OFF"), part("training", 1, "REQUEUE")),
                Optional.empty()))
        .isEmpty();
  }

  @Test
  void reportsMissingPartitionsWrongOrderAndUnpreemptibleVictims() throws Exception {
    assertThat(
            SlurmDrift.differences(
                example("minimal.yaml"), List.of(part("training", 1, "OFF")), Optional.empty()))
        .containsExactly("tier inference: partition inference does not exist in Slurm");
    assertThat(
            SlurmDrift.differences(
                example("minimal.yaml"),
                List.of(part("inference", 1, "OFF"), part("training", 5, "OFF")),
                Optional.empty()))
        .containsExactly(
            "tier inference may preempt training, but partition inference (PriorityTier=1) does not outrank partition training (PriorityTier=5)",
            "tier training is preemptible, but partition training has PreemptMode=OFF");
  }

  /** A preempted placeholder must hold its GPUs until its pod stopped: grace, and no SUSPEND. */
  @Test
  void aPreemptiblePodTierNeedsAGraceTimeAndAPreemptModeThatEndsTheJob() {
    Policy p =
        PolicyParser.parse(
            """
            apiVersion: kse.io/v1alpha1
            kind: PlacementPolicy
            cluster: {preemptMode: partition}
            defaultTier: inference
            tiers:
              - name: critical
                match: {namespaces: [critical]}
                slurm: {partition: critical}
                mayPreempt: [inference]
              - name: inference
                slurm: {partition: inference}
                preemptible: true
            """,
            "test");
    assertThat(
            SlurmDrift.differences(
                p,
                List.of(part("critical", 20, "OFF"), part("inference", 10, "SUSPEND,GANG")),
                Optional.empty()))
        .containsExactly(
            "tier inference: its pods' placeholders are preemptible but graceTime is 0, so Slurm"
                + " would give their GPUs to the next job at once while the pods still run; set"
                + " graceTime (and GraceTime in Slurm) to at least the time its pods take to stop",
            "tier inference: partition inference has PreemptMode=SUSPEND,GANG, which suspends a"
                + " preempted placeholder and lets another job use the GPUs its pods hold; use"
                + " CANCEL or REQUEUE");
  }

  @Test
  void saysWhenPreemptModeCannotBeCompared() throws Exception {
    assertThat(
            SlurmDrift.differences(
                example("minimal.yaml"),
                List.of(part("inference", 10, null), part("training", 1, null)),
                Optional.empty()))
        .containsExactly(
            "note: this slurmrestd version does not report partition PreemptMode; it was not compared");
  }

  @Test
  void comparesQosPreemptListsGraceAndExemptTimes() throws Exception {
    Policy lab = example("lab.yaml");
    List<LivePartition> parts =
        List.of(part("inference", 10, "OFF"), part("training", 1, "REQUEUE"));
    List<LiveQos> good =
        List.of(
            new LiveQos(
                "inference-critical",
                Set.of("inference", "batch", "training"),
                Duration.ZERO,
                Optional.empty()),
            new LiveQos("inference-nopreempt", Set.of(), Duration.ZERO, Optional.empty()),
            new LiveQos(
                "inference", Set.of("batch", "training"), Duration.ofSeconds(30), Optional.empty()),
            new LiveQos("batch", Set.of(), Duration.ofSeconds(10), Optional.empty()),
            new LiveQos(
                "training", Set.of(), Duration.ofMinutes(2), Optional.of(Duration.ofMinutes(15))));
    assertThat(SlurmDrift.differences(lab, parts, Optional.of(good))).isEmpty();

    List<LiveQos> bad =
        List.of(
            new LiveQos(
                "inference-critical",
                Set.of("inference", "training", "normal"),
                Duration.ZERO,
                Optional.empty()),
            new LiveQos("inference-nopreempt", Set.of("training"), Duration.ZERO, Optional.empty()),
            new LiveQos(
                "inference", Set.of("batch", "training"), Duration.ofSeconds(30), Optional.empty()),
            new LiveQos("training", Set.of(), Duration.ofSeconds(2), Optional.empty()));
    assertThat(SlurmDrift.differences(lab, parts, Optional.of(bad)))
        .containsExactlyInAnyOrder(
            "tier inference-critical: fallback QoS inference-nopreempt may preempt [training], but it exists so that placeholders do not preempt",
            "tier inference-critical may preempt QoS batch, but QoS inference-critical has no batch in its Preempt list",
            "QoS inference-critical (tier inference-critical) may preempt QoS normal, which the policy does not allow",
            "tier inference: fallback QoS inference-nopreempt may preempt [training], but it exists so that placeholders do not preempt",
            "tier batch: QoS batch does not exist in Slurm",
            "tier training: graceTime 00:02:00, but QoS training has GraceTime=2",
            "tier training: minRuntime 00:15:00, but QoS training has PreemptExemptTime=unset");
    assertThat(SlurmDrift.differences(lab, parts, Optional.empty()))
        .contains(
            "cluster.preemptMode is qos, but the QoS definitions cannot be read (is slurmdbd there?)");
  }
}
