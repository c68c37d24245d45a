package io.kse.extender.k8s;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The informer's index of our pods by node, which the Epilog's hold reads (issue 43). */
@EnableKubernetesMockClient(crud = true)
class PodInformerTest {
  static KubernetesClient client;

  private static Pod pod(String name, String scheduler, String node) {
    return new PodBuilder()
        .withNewMetadata()
        .withName(name)
        .withNamespace("ns")
        .endMetadata()
        .withNewSpec()
        .withSchedulerName(scheduler)
        .withNodeName(node)
        .endSpec()
        .build();
  }

  @Test
  void podsOnANodeComeFromTheIndexAndFollowBinds() {
    client.pods().inNamespace("ns").resource(pod("a", "ours", "n1")).create();
    client.pods().inNamespace("ns").resource(pod("b", "ours", "n2")).create();
    client.pods().inNamespace("ns").resource(pod("c", "ours", null)).create();
    client.pods().inNamespace("ns").resource(pod("d", "theirs", "n1")).create();
    try (PodInformer informer = new PodInformer(client, "ours", Optional.empty(), false)) {
      informer.start(p -> {}, p -> {});
      await().atMost(Duration.ofSeconds(10)).until(informer::synced);
      assertThat(informer.podsOn("n1"))
          .extracting(p -> p.getMetadata().getName())
          .containsExactly("a");
      assertThat(informer.podsOn("n3")).isEmpty();
      client
          .pods()
          .inNamespace("ns")
          .withName("c")
          .edit(
              p -> {
                p.getSpec().setNodeName("n1");
                return p;
              });
      await()
          .atMost(Duration.ofSeconds(10))
          .untilAsserted(
              () ->
                  assertThat(informer.podsOn("n1"))
                      .extracting(p -> p.getMetadata().getName())
                      .containsExactlyInAnyOrder("a", "c"));
      assertThat(informer.podsOn("n1"))
          .as("the index agrees with reading every pod")
          .containsExactlyInAnyOrderElementsOf(
              informer.pods().stream()
                  .filter(p -> "n1".equals(p.getSpec().getNodeName()))
                  .toList());
    }
  }
}
