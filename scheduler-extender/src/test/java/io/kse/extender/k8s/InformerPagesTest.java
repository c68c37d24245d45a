package io.kse.extender.k8s;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Issue 47: on the scale rig the node informer's first list of 10,000 nodes arrived in one answer,
 * decoded whole before the slim store kept its copies (the extender's RSS 375 MiB for a live heap
 * of 54). The informers ask in pages (fabric8 follows each page's continue token).
 */
@EnableKubernetesMockClient(crud = true)
class InformerPagesTest {
  static KubernetesClient client;
  static KubernetesMockServer server;

  @Test
  void nodesAndPodsAreListedInPages() throws InterruptedException {
    for (int i = 0; i < 3; i++) {
      client
          .nodes()
          .resource(new NodeBuilder().withNewMetadata().withName("n" + i).endMetadata().build())
          .create();
    }
    client
        .pods()
        .inNamespace("ns")
        .resource(
            new PodBuilder()
                .withNewMetadata()
                .withName("p")
                .withNamespace("ns")
                .endMetadata()
                .withNewSpec()
                .withSchedulerName("ours")
                .endSpec()
                .build())
        .create();
    try (NodeInformer nodes = new NodeInformer(client);
        PodInformer pods = new PodInformer(client, "ours", Optional.empty(), false)) {
      nodes.start(new NodeNames(), n -> {});
      pods.start(p -> {}, p -> {});
      assertThat(nodes.size()).isEqualTo(3);
      List<String> lists = new ArrayList<>();
      for (RecordedRequest r = server.takeRequest(1, TimeUnit.SECONDS);
          r != null;
          r = server.takeRequest(1, TimeUnit.SECONDS)) {
        if ("GET".equals(r.getMethod()) && !r.getPath().contains("watch=true")) {
          lists.add(r.getPath());
        }
      }
      assertThat(lists)
          .filteredOn(p -> p.startsWith("/api/v1/nodes?"))
          .isNotEmpty()
          .allMatch(p -> p.contains("limit=" + InformerPages.SIZE), "a page at a time");
      assertThat(lists)
          .filteredOn(p -> p.startsWith("/api/v1/pods?"))
          .isNotEmpty()
          .allMatch(p -> p.contains("limit=" + InformerPages.SIZE), "a page at a time");
    }
  }
}
