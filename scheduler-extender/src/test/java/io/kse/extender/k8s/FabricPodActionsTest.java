package io.kse.extender.k8s;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.time.Clock;
import org.junit.jupiter.api.Test;

@EnableKubernetesMockClient
class FabricPodActionsTest {
  static KubernetesClient client;
  static KubernetesMockServer server;

  @Test
  void anUngatedPodIsWokenWithTwoMergePatchesWithTheUidAsPreconditionAndNoRead() throws Exception {
    // found by the e2e benchmark: read-modify-write lost races with kube-scheduler (409) under load
    String pod = "/api/v1/namespaces/serving/pods/llm-0";
    String answer = "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"llm-0\"}}";
    server.expect().patch().withPath(pod).andReturn(200, answer).once();
    server.expect().patch().withPath(pod + "/status").andReturn(200, answer).once();
    int before = server.getRequestCount();

    new FabricPodActions(client, Clock.systemUTC())
        .wake(new PodRef("serving", "llm-0", "uid-1"), "gpu-node-3", 42, false);

    assertThat(server.getRequestCount() - before).isEqualTo(2);
    var annotations = server.takeRequest();
    assertThat(annotations.getMethod()).isEqualTo("PATCH");
    assertThat(annotations.getHeader("Content-Type")).contains("application/merge-patch+json");
    assertThat(annotations.getBody().readUtf8())
        .contains("\"uid\":\"uid-1\"")
        .doesNotContain("schedulingGates")
        .contains("\"kse.io/slurm-job\":\"42\"")
        .contains("\"kse.io/slurm-node\":\"gpu-node-3\"");
    var status = server.takeRequest();
    assertThat(status.getPath()).endsWith("/status");
    assertThat(status.getBody().readUtf8())
        .contains("\"uid\":\"uid-1\"")
        .contains("\"nominatedNodeName\":\"gpu-node-3\"");
  }

  @Test
  void aGatedPodIsWokenWithOneStrategicPatchThatLiftsOnlyOurGate() throws Exception {
    String pod = "/api/v1/namespaces/serving/pods/llm-1";
    String answer = "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"llm-1\"}}";
    server.expect().patch().withPath(pod).andReturn(200, answer).once();
    int before = server.getRequestCount();
    new FabricPodActions(client, Clock.systemUTC())
        .wake(new PodRef("serving", "llm-1", "uid-2"), "gpu-node-4", 43, true);
    assertThat(server.getRequestCount() - before).isEqualTo(1);
    var patch = server.takeRequest();
    while (!patch.getPath().endsWith("/llm-1")) {
      patch = server.takeRequest(); // skip the other test's requests
    }
    assertThat(patch.getHeader("Content-Type")).contains("strategic-merge-patch+json");
    assertThat(patch.getBody().readUtf8())
        .contains("\"uid\":\"uid-2\"")
        .contains("\"kse.io/slurm-job\":\"43\"")
        .contains(
            "\"schedulingGates\":[{\"name\":\"kse.io/slurm-allocation\",\"$patch\":\"delete\"}]");
  }

  @Test
  void aDisruptionBudgetRefusalIsReportedAtOnceNotRetriedInsideTheCall() {
    // found by e2e: fabric8 retried the 429 for ~20 s inside evict(), so the reconciler's own
    // backoff and the PDB override ran 20 s late
    String eviction = "/api/v1/namespaces/serving/pods/llm-2/eviction";
    server
        .expect()
        .post()
        .withPath(eviction)
        .andReturn(429, "{\"kind\":\"Status\",\"code\":429}")
        .always();
    int before = server.getRequestCount();
    PodActions.EvictResult r =
        new FabricPodActions(client, Clock.systemUTC())
            .evict(new PodRef("serving", "llm-2", "uid-3"), "job ended");
    assertThat(r).isEqualTo(PodActions.EvictResult.BLOCKED_BY_PDB);
    assertThat(server.getRequestCount() - before).as("one request, no retries").isEqualTo(1);
  }
}
