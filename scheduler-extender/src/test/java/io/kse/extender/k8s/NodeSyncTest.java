package io.kse.extender.k8s;

import static org.assertj.core.api.Assertions.assertThat;

import io.kse.extender.testing.FakeSlurm;
import io.kse.slurm.NodeAdmin;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class NodeSyncTest {
  final FakeSlurm slurm = new FakeSlurm();
  final Map<String, KubeNodes.KubeNode> nodes = new LinkedHashMap<>();
  final List<String> log = new ArrayList<>();
  boolean writer = true;

  /** The API server refuses node edits (RBAC, conflicts). */
  boolean refuseEdits;

  final KubeNodes kube =
      new KubeNodes() {
        @Override
        public Collection<KubeNode> nodes() {
          return nodes.values();
        }

        @Override
        public Optional<KubeNode> node(String name) {
          return Optional.ofNullable(nodes.get(name));
        }

        @Override
        public boolean taint(String node, String value) {
          log.add("taint " + node + "=" + value);
          if (refuseEdits) {
            return false;
          }
          nodes.put(node, new KubeNode(node, nodes.get(node).cordoned(), Optional.of(value)));
          return true;
        }

        @Override
        public boolean untaint(String node) {
          log.add("untaint " + node);
          if (refuseEdits) {
            return false;
          }
          nodes.put(node, new KubeNode(node, nodes.get(node).cordoned(), Optional.empty()));
          return true;
        }
      };
  final NodeSync sync =
      new NodeSync(
          kube,
          slurm.cache,
          slurm.cache::refreshNodes,
          NodeAdmin.rest(slurm.client),
          new NodeNames(),
          () -> writer);

  void kubeNode(String name, boolean cordoned) {
    nodes.put(name, new KubeNodes.KubeNode(name, cordoned, Optional.empty()));
  }

  void round() {
    slurm.cache.pollOnce();
    sync.reconcileAll();
    slurm.cache.pollOnce();
  }

  @Test
  void aCordonDrainsTheSlurmNodeAndUncordonResumesIt() {
    kubeNode("gpu-node-0", true);
    round();
    assertThat(slurm.cache.node("gpu-node-0").orElseThrow().reason())
        .isEqualTo(NodeSync.DRAIN_REASON);
    assertThat(log).as("our own drain never taints").isEmpty();
    kubeNode("gpu-node-0", false);
    round();
    assertThat(slurm.cache.node("gpu-node-0").orElseThrow().isDraining()).isFalse();
  }

  @Test
  void aSlurmDrainTaintsTheNodeAndIsNeverUndoneByUs() {
    kubeNode("gpu-node-1", false);
    slurm.client.drain("gpu-node-1", "bad GPU");
    round();
    assertThat(log).containsExactly("taint gpu-node-1=idle-drain");
    assertThat(slurm.cache.node("gpu-node-1").orElseThrow().reason())
        .as("an SRE's drain stays")
        .isEqualTo("bad GPU");
    slurm.client.resume("gpu-node-1");
    round();
    assertThat(log).containsExactly("taint gpu-node-1=idle-drain", "untaint gpu-node-1");
  }

  @Test
  void aRefusedTaintIsNotTakenForDoneAndIsTriedAgain() {
    // NodeInformer.edit swallowed the failure while NodeSync logged node_tainted
    kubeNode("gpu-node-1", false);
    slurm.client.drain("gpu-node-1", "bad GPU");
    refuseEdits = true;
    round();
    assertThat(nodes.get("gpu-node-1").ourTaint()).isEmpty();
    refuseEdits = false;
    round();
    assertThat(log).containsExactly("taint gpu-node-1=idle-drain", "taint gpu-node-1=idle-drain");
    assertThat(nodes.get("gpu-node-1").ourTaint()).contains("idle-drain");
  }

  /** Issue 26 #6: down, failed or not responding is unavailable as much as drained. */
  @Test
  void aNodeDownOrNotRespondingIsTaintedWhileSlurmSaysSoAndUntaintedWhenItIsBack() {
    kubeNode("gpu-node-1", false);
    slurm.client.setNodeState("gpu-node-1", "idle", java.util.Set.of("NOT_RESPONDING"));
    round();
    assertThat(nodes.get("gpu-node-1").ourTaint()).contains("idle-notresponding");
    slurm.client.setNodeState("gpu-node-1", "down", java.util.Set.of("NOT_RESPONDING"));
    round();
    assertThat(nodes.get("gpu-node-1").ourTaint()).contains("down-notresponding");
    slurm.client.setNodeState("gpu-node-1", "down", java.util.Set.of());
    round();
    assertThat(nodes.get("gpu-node-1").ourTaint()).contains("down");
    slurm.client.setNodeState("gpu-node-1", "idle", java.util.Set.of());
    round();
    assertThat(nodes.get("gpu-node-1").ourTaint()).isEmpty();
    assertThat(log)
        .containsExactly(
            "taint gpu-node-1=idle-notresponding",
            "taint gpu-node-1=down-notresponding",
            "taint gpu-node-1=down",
            "untaint gpu-node-1");
  }

  @Test
  void aCordonOfADrainedNodeDoesNotTakeOverTheSresDrain() {
    kubeNode("gpu-node-1", true);
    slurm.client.drain("gpu-node-1", "bad GPU");
    round();
    kubeNode("gpu-node-1", false);
    round();
    assertThat(slurm.cache.node("gpu-node-1").orElseThrow().reason()).isEqualTo("bad GPU");
  }

  @Test
  void nodesOfOnlyOneWorldAndNonWritersAreLeftAlone() {
    kubeNode("cpu-node-0", true);
    round();
    assertThat(log).isEmpty();
    writer = false;
    kubeNode("gpu-node-0", true);
    round();
    assertThat(slurm.cache.node("gpu-node-0").orElseThrow().isDraining()).isFalse();
  }
}
