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

  /** Issue 47: the HTTP stacks are run against the extender's own listeners. */
  @Test
  void overLoopbackItCallsItsOwnFilterAndHealthAsKubeSchedulerAndTheKubeletWould()
      throws Exception {
    com.sun.net.httpserver.HttpServer server =
        com.sun.net.httpserver.HttpServer.create(
            new java.net.InetSocketAddress(java.net.InetAddress.getLoopbackAddress(), 0), 0);
    java.util.List<String> seen =
        java.util.Collections.synchronizedList(new java.util.ArrayList<>());
    server.createContext(
        "/",
        x -> {
          byte[] in = x.getRequestBody().readAllBytes();
          seen.add(x.getRequestMethod() + " " + x.getRequestURI().getPath() + " " + in.length);
          x.sendResponseHeaders(200, 2);
          x.getResponseBody().write("ok".getBytes(java.nio.charset.StandardCharsets.UTF_8));
          x.close();
        });
    server.start();
    try {
      java.net.URI self = java.net.URI.create("http://127.0.0.1:" + server.getAddress().getPort());
      byte[] body = WarmUp.filterBody(json, 4);
      WarmUp.Cost c = WarmUp.overLoopback(java.util.Optional.of(self), self, body, 2);
      assertThat(c.rounds()).isEqualTo(2);
      String filter = "POST /filter " + body.length;
      assertThat(seen).containsExactly("GET /healthz 0", filter, "GET /healthz 0", filter);
      seen.clear();
      WarmUp.overLoopback(java.util.Optional.empty(), self, body, 2);
      assertThat(seen)
          .as("a TLS verbs port is left alone")
          .containsExactly("GET /healthz 0", "GET /healthz 0");
    } finally {
      server.stop(0);
    }
  }

  @Test
  void theMadeUpPodIsOneThePolicyDecides() throws Exception {
    io.kse.policy.PodFacts facts =
        io.kse.policy.PodManifest.facts(
            new com.fasterxml.jackson.databind.ObjectMapper().valueToTree(WarmUp.pod()));
    assertThat(facts.gpus()).isEqualTo(8);
  }
}
