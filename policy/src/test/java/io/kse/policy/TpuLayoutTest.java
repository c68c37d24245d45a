package io.kse.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kse.policy.model.Policy;
import org.junit.jupiter.api.Test;

class TpuLayoutTest {
  private final Policy tpu = PolicyParser.parse(Policies.example("tpu.yaml"), "tpu.yaml");

  @Test
  void oneLayoutGivesSlurmsLinesAndTheKubernetesLabelsThatAgree() {
    String out =
        TpuLayout.parse(tpu, "tpu-v5p-slice:2x2x4:2,tpu-v5p-slice:2x4x4:1")
            .render("tpu-host-", "/dev/accel[0-3]");
    assertThat(out)
        .contains("NodeName=tpu-host-[0-3] Gres=tpu:4 Features=tpu-v5p-2x2x4")
        .contains("NodeName=tpu-host-[4-7] Gres=tpu:4 Features=tpu-v5p-2x2x4")
        .contains("NodeName=tpu-host-[8-15] Gres=tpu:4 Features=tpu-v5p-2x4x4")
        .contains("NodeName=tpu-host-[8-15] Name=tpu File=/dev/accel[0-3]")
        .contains("BlockName=slice-0 Nodes=tpu-host-[0-3]")
        .contains("BlockName=slice-2 Nodes=tpu-host-[8-15]")
        .contains("BlockSizes=4")
        .contains(
            "kubectl label node tpu-host-15 cloud.google.com/gke-tpu-accelerator=tpu-v5p-slice"
                + " cloud.google.com/gke-tpu-topology=2x4x4 cloud.google.com/gke-nodepool=slice-2");
  }

  @Test
  void aSingleHostSliceIsOneNodeAndItsChips() {
    String out = TpuLayout.parse(tpu, "tpu-v5p-slice:2x2x1:1").render("h", "/dev/vfio/[0-3]");
    assertThat(out)
        .contains("NodeName=h0 Gres=tpu:4 Features=tpu-v5p-2x2x1")
        .contains("BlockName=slice-0 Nodes=h0")
        .contains("BlockSizes=1");
  }

  @Test
  void aLayoutThePolicyDoesNotKnowIsRefusedNamingIt() {
    assertThatThrownBy(() -> TpuLayout.parse(tpu, "tpu-v5p-slice:4x4x4:1"))
        .hasMessageContaining("the policy lists no tpu-v5p-slice topology 4x4x4");
    assertThatThrownBy(() -> TpuLayout.parse(tpu, "tpu-v9:2x2x4:1"))
        .hasMessageContaining("tpu-v9 is no TPU type of the policy");
    assertThatThrownBy(() -> TpuLayout.parse(tpu, "tpu-v5p-slice:2x2x4"))
        .hasMessageContaining("expected TYPE:TOPOLOGY:COUNT");
    assertThatThrownBy(() -> TpuLayout.parse(tpu, "tpu-v5p-slice:2x2x4:0"))
        .hasMessageContaining("the count must be 1..4096");
    assertThatThrownBy(() -> TpuLayout.parse(Policies.minimal(), "tpu-v5p-slice:2x2x4:1"))
        .hasMessageContaining("the policy names no TPU slices");
  }
}
