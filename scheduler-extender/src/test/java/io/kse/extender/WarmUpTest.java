package io.kse.extender;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.kse.extender.wire.FilterRequest;
import org.junit.jupiter.api.Test;

class WarmUpTest {
  final KubernetesSerialization json = new KubernetesSerialization();

  @Test
  void theFilterBodyIsKubeSchedulersForTheMadeUpPod() {
    FilterRequest req = FilterRequest.parse(WarmUp.filterBody(json, 32), 5_000);
    assertThat(req.nodeNames()).hasSize(32).startsWith("gpu-node-0");
    assertThat(req.pod().uid()).isEqualTo("uid-0");
  }

  @Test
  void everyRoundRunsEveryPathOnTheDecodedPod() {
    java.util.List<String> decided = new java.util.ArrayList<>();
    WarmUp.Cost c = WarmUp.run(json, 3, p -> decided.add(p.getMetadata().getName()));
    assertThat(c.rounds()).isEqualTo(3);
    assertThat(decided).containsExactly("llm-0", "llm-0", "llm-0");
  }

  @Test
  void theMadeUpPodIsOneThePolicyDecides() throws Exception {
    io.kse.policy.PodFacts facts =
        io.kse.policy.PodManifest.facts(
            new com.fasterxml.jackson.databind.ObjectMapper().valueToTree(WarmUp.pod()));
    assertThat(facts.gpus()).isEqualTo(8);
  }
}
