package io.kse.extender.k8s;

import static org.assertj.core.api.Assertions.assertThat;

import io.kse.policy.PolicyParser;
import io.kse.policy.model.ClusterSpec;
import io.kse.slurm.SlurmNode;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

class TopologyCheckTest {
  private final Map<String, KubeNodes.KubeNode> kube = new HashMap<>();
  private final List<String> told = new ArrayList<>();
  private Instant now = Instant.parse("2026-11-28T10:00:00Z");
  private boolean sync;
  private final List<String> labelled = new ArrayList<>();

  private final ClusterSpec cluster =
      PolicyParser.parse(
              """
              apiVersion: kse.io/v1alpha1
              kind: PlacementPolicy
              cluster:
                preemptMode: partition
                nvlinkDomainFeatures: [nvl-0, nvl-1]
              defaultTier: t
              tiers:
                - name: t
                  slurm: {partition: p}
              """,
              "test")
          .cluster();

  private final KubeNodes nodes =
      new KubeNodes() {
        @Override
        public Collection<KubeNode> nodes() {
          return kube.values();
        }

        @Override
        public Optional<KubeNode> node(String name) {
          return Optional.ofNullable(kube.get(name));
        }

        @Override
        public boolean taint(String node, String value) {
          return true;
        }

        @Override
        public boolean untaint(String node) {
          return true;
        }

        @Override
        public boolean label(String node, Map<String, Optional<String>> labels) {
          labelled.add(node + " " + labels);
          Map<String, String> now = new HashMap<>(kube.get(node).labels());
          labels.forEach((k, v) -> v.ifPresentOrElse(x -> now.put(k, x), () -> now.remove(k)));
          kube.put(node, new KubeNodes.KubeNode(node, false, Optional.empty(), now));
          return true;
        }
      };

  private static SlurmNode slurmNode(String name, String feature) {
    return new SlurmNode(
        name, "idle", Set.of(), "", Set.of(feature), "gpu:h100:8", "", 16, 0, 128000, List.of("p"));
  }

  private final List<SlurmNode> slurm =
      List.of(slurmNode("gpu-0", "nvl-0"), slurmNode("gpu-1", "nvl-1"));

  private TopologyCheck check() {
    java.time.Clock clock =
        new java.time.Clock() {
          @Override
          public java.time.ZoneId getZone() {
            return ZoneOffset.UTC;
          }

          @Override
          public java.time.Clock withZone(java.time.ZoneId zone) {
            return this;
          }

          @Override
          public Instant instant() {
            return now;
          }
        };
    return new TopologyCheck(
        nodes,
        () -> slurm,
        new NodeNames(),
        () -> cluster,
        (node, reason, message) -> told.add(node + " " + reason.reason() + " " + message),
        clock,
        sync);
  }

  private void label(String node, String domain) {
    kube.put(
        node,
        new KubeNodes.KubeNode(
            node, false, Optional.empty(), Map.of("kse.io/nvlink-domain", domain)));
  }

  @Test
  void aDifferenceIsToldOnItsNodeOnceAndForgottenWhenMended() {
    label("gpu-0", "nvl-0");
    label("gpu-1", "nvl-0"); // Slurm says nvl-1
    TopologyCheck c = check();
    c.checkIfDue();
    assertThat(c.differences()).hasSize(1);
    assertThat(told)
        .containsExactly(
            "gpu-1 TopologyDrift Kubernetes and Slurm disagree on this node's topology (Slurm's"
                + " is the truth): node gpu-1: Kubernetes label kse.io/nvlink-domain=nvl-0,"
                + " Slurm's NVLink-domain feature nvl-1");
    now = now.plus(TopologyCheck.INTERVAL);
    c.checkIfDue();
    assertThat(told).as("told once while it lasts").hasSize(1);
    label("gpu-1", "nvl-1");
    now = now.plus(TopologyCheck.INTERVAL);
    c.checkIfDue();
    assertThat(c.differences()).isEmpty();
  }

  @Test
  void itComparesAtMostOncePerInterval() {
    label("gpu-0", "nvl-0");
    label("gpu-1", "nvl-1");
    TopologyCheck c = check();
    c.checkIfDue();
    label("gpu-1", "nvl-0");
    now = now.plus(Duration.ofSeconds(5));
    c.checkIfDue();
    assertThat(c.differences()).as("not due yet").isEmpty();
    now = now.plus(TopologyCheck.INTERVAL);
    c.checkIfDue();
    assertThat(c.differences()).hasSize(1);
  }

  @Test
  void withTheSyncOnTheLabelsSlurmImpliesAreWrittenAndNothingIsToldAsDrift() {
    sync = true;
    label("gpu-0", "nvl-0");
    label("gpu-1", "nvl-0"); // Slurm says nvl-1
    kube.put("cpu-1", new KubeNodes.KubeNode("cpu-1", false, Optional.empty(), Map.of("a", "b")));
    TopologyCheck c = check();
    c.checkIfDue();
    assertThat(labelled).containsExactly("gpu-1 {kse.io/nvlink-domain=Optional[nvl-1]}");
    assertThat(kube.get("gpu-1").labels()).containsEntry("kse.io/nvlink-domain", "nvl-1");
    assertThat(c.differences()).isEmpty();
    assertThat(told).isEmpty();
    now = now.plus(TopologyCheck.INTERVAL);
    c.checkIfDue();
    assertThat(labelled).as("written once: converged").hasSize(1);
  }
}
