package io.kse.extender.k8s;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ManagedFieldsEntryBuilder;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import java.util.Map;
import org.junit.jupiter.api.Test;

class SlimItemStoreTest {
  private static final Pod POD =
      new PodBuilder()
          .withNewMetadata()
          .withNamespace("serving")
          .withName("llm-0")
          .withUid("uid-1")
          .withResourceVersion("7")
          .withCreationTimestamp("2026-11-25T10:00:00Z")
          .withDeletionTimestamp("2026-11-25T10:05:00Z")
          .withLabels(Map.of("app", "llm"))
          .withAnnotations(Map.of("kse.io/slurm-job", "42"))
          .addNewOwnerReference()
          .withKind("ReplicaSet")
          .withName("llm-abc")
          .withUid("rs-1")
          .endOwnerReference()
          .withManagedFields(new ManagedFieldsEntryBuilder().withManager("kubectl").build())
          .withFinalizers("example.com/hold")
          .endMetadata()
          .withNewSpec()
          .withSchedulerName("slurm-inference")
          .withNodeName("gpu-node-1")
          .endSpec()
          .withNewStatus()
          .withPhase("Running")
          .withNominatedNodeName("gpu-node-1")
          .withHostIP("10.0.0.1")
          .addNewCondition()
          .withType("Ready")
          .withStatus("True")
          .endCondition()
          .endStatus()
          .build();

  @Test
  void aStoredPodKeepsWhatTheExtenderReadsAndReadsCostNoCopy() {
    SlimItemStore<Pod> store = SlimItemStore.pods();
    String key = store.getKey(POD);
    store.put(key, POD);

    Pod kept = store.get(key);
    assertThat(key).isEqualTo("serving/llm-0");
    assertThat(kept).as("the same object every read").isSameAs(store.get(key));
    assertThat(kept.getMetadata().getUid()).isEqualTo("uid-1");
    assertThat(kept.getMetadata().getResourceVersion()).isEqualTo("7");
    assertThat(kept.getMetadata().getLabels()).containsEntry("app", "llm");
    assertThat(kept.getMetadata().getAnnotations()).containsEntry("kse.io/slurm-job", "42");
    assertThat(kept.getMetadata().getCreationTimestamp()).isEqualTo("2026-11-25T10:00:00Z");
    assertThat(kept.getMetadata().getDeletionTimestamp()).isEqualTo("2026-11-25T10:05:00Z");
    assertThat(kept.getMetadata().getOwnerReferences()).hasSize(1);
    assertThat(kept.getSpec().getNodeName()).isEqualTo("gpu-node-1");
    assertThat(kept.getSpec().getSchedulerName()).isEqualTo("slurm-inference");
    assertThat(kept.getStatus().getPhase()).isEqualTo("Running");
    assertThat(kept.getStatus().getNominatedNodeName()).isEqualTo("gpu-node-1");
    assertThat(kept.getMetadata().getManagedFields()).isEmpty();
    assertThat(kept.getStatus().getConditions()).isEmpty();
    assertThat(kept.getStatus().getHostIP()).isNull();
    assertThat(POD.getMetadata().getManagedFields())
        .as("the informer's object untouched")
        .hasSize(1);
    assertThat(store.isFullState()).isFalse();
  }

  @Test
  void aStoredPodKeepsOurConditionOnlyOfItsConditions() {
    // a wake-up must turn the condition of a pod told it waits (issue 30: others need no status
    // write), so the store must say whether the pod carries it
    Pod told = io.kse.extender.testing.Pods.toldItWaits(POD);
    SlimItemStore<Pod> store = SlimItemStore.pods();
    store.put(store.getKey(told), told);
    assertThat(store.get(store.getKey(told)).getStatus().getConditions())
        .extracting(c -> c.getType() + "=" + c.getStatus())
        .containsExactly("kse.io/SlurmAllocated=False");
  }

  @Test
  void aStoredNodeKeepsNameLabelsCordonAndTaintsOnly() {
    Node node =
        new NodeBuilder()
            .withNewMetadata()
            .withName("gpu-node-3")
            .withLabels(Map.of("kse.io/slurm-node", "sn-3"))
            .withManagedFields(new ManagedFieldsEntryBuilder().withManager("kubelet").build())
            .endMetadata()
            .withNewSpec()
            .withUnschedulable(true)
            .addNewTaint()
            .withKey("kse.io/slurm-state")
            .withValue("drain")
            .withEffect("NoSchedule")
            .endTaint()
            .withPodCIDR("10.1.0.0/24")
            .endSpec()
            .withNewStatus()
            .addNewCondition()
            .withType("Ready")
            .withStatus("True")
            .endCondition()
            .endStatus()
            .build();
    SlimItemStore<Node> store = SlimItemStore.nodes();
    store.put(store.getKey(node), node);

    Node kept = store.get("gpu-node-3");
    assertThat(kept.getMetadata().getLabels()).containsEntry("kse.io/slurm-node", "sn-3");
    assertThat(kept.getSpec().getUnschedulable()).isTrue();
    assertThat(kept.getSpec().getTaints())
        .singleElement()
        .satisfies(t -> t.getValue().equals("drain"));
    assertThat(kept.getSpec().getPodCIDR()).isNull();
    assertThat(kept.getStatus()).isNull();
    assertThat(kept.getMetadata().getManagedFields()).isEmpty();
    assertThat(store.size()).isEqualTo(1);
    store.remove("gpu-node-3");
    assertThat(store.get("gpu-node-3")).isNull();
  }
}
