package io.kse.extender.k8s;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class NodeNamesTest {
  final NodeNames names = new NodeNames();

  @Test
  void namesAreTheSameUnlessALabelSaysOtherwise() {
    names.observe("gpu-node-0", null);
    names.observe("k8s-a", "slurm-a");
    assertThat(names.kubernetes("gpu-node-0")).isEqualTo("gpu-node-0");
    assertThat(names.kubernetes("slurm-a")).isEqualTo("k8s-a");
    assertThat(names.slurm("k8s-a")).isEqualTo("slurm-a");
    assertThat(names.conflicts()).isEmpty();
  }

  @Test
  void aSlurmNodeClaimedTwiceMapsToNoNodeUntilResolved() {
    // a node that labels itself as another could attract pods Slurm allocated elsewhere
    names.observe("gpu-node-1", null);
    names.observe("intruder", "gpu-node-1");
    assertThat(names.kubernetes("gpu-node-1")).isEqualTo(NodeNames.NONE);
    assertThat(names.conflicts()).containsExactly("gpu-node-1");
    assertThat(names.claimants("gpu-node-1")).containsExactly("gpu-node-1", "intruder");
    names.observe("intruder", null);
    assertThat(names.kubernetes("gpu-node-1")).isEqualTo("gpu-node-1");
    names.observe("a", "slurm-x");
    names.observe("b", "slurm-x");
    assertThat(names.kubernetes("slurm-x")).isEqualTo(NodeNames.NONE);
    names.forget("b");
    assertThat(names.kubernetes("slurm-x")).isEqualTo("a");
  }

  @Test
  void theLabelIsOneKubeletsCannotSet() {
    assertThat(WellKnown.SLURM_NODE_LABEL).startsWith("node-restriction.kubernetes.io/");
  }
}
