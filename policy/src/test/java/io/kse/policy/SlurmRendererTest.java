package io.kse.policy;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class SlurmRendererTest {
  @Test
  void rendersPartitionsWithPriorityTierAndPreemptMode() {
    String out = SlurmRenderer.render(Policies.minimal(), "gpu-node-[0-7]");
    assertThat(out)
        .contains("PreemptType=preempt/partition_prio")
        .contains(
            "PartitionName=inference Nodes=gpu-node-[0-7] PriorityTier=20 PreemptMode=OFF State=UP")
        .contains(
            "PartitionName=training Nodes=gpu-node-[0-7] PriorityTier=10 PreemptMode=REQUEUE State=UP");
  }

  @Test
  void rendersQosWithPreemptListsGraceAndExemptTime() {
    String out = SlurmRenderer.render(Policies.lab(), "ALL");
    assertThat(out)
        .contains("PreemptType=preempt/qos")
        .contains(
            "modify qos inference set Priority=300 Preempt=batch,training PreemptMode=requeue GraceTime=30 PreemptExemptTime=-1")
        .contains(
            "modify qos training set Priority=100 Preempt='' PreemptMode=requeue GraceTime=120 PreemptExemptTime=00:15:00")
        .contains("modify qos inference-nopreempt set Priority=400 Preempt=''");
  }
}
