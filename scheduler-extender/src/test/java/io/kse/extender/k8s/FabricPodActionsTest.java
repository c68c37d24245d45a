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
  void anUngatedPodIsWokenWithOneStatusPatchWithTheUidAsPreconditionAndNoRead() throws Exception {
    // found by the e2e benchmark: read-modify-write lost races with kube-scheduler (409) under
    // load;
    // issue 16: annotations, nomination and condition were three writes, now one
    String pod = "/api/v1/namespaces/serving/pods/llm-0";
    String answer = "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"llm-0\"}}";
    server.expect().patch().withPath(pod + "/status").andReturn(200, answer).once();
    int before = server.getRequestCount();

    boolean woken =
        new FabricPodActions(client, Clock.systemUTC())
            .wake(
                new PodRef("serving", "llm-0", "uid-1"),
                "gpu-node-3",
                42,
                PodActions.WakeUp.NOMINATE);

    assertThat(woken).isTrue();
    assertThat(server.getRequestCount() - before).isEqualTo(1);
    var status = takeFor(pod + "/status");
    assertThat(status.getMethod()).isEqualTo("PATCH");
    assertThat(status.getHeader("Content-Type")).contains("strategic-merge-patch+json");
    assertThat(status.getBody().readUtf8())
        .contains("\"uid\":\"uid-1\"")
        .doesNotContain("schedulingGates")
        .contains("\"kse.io/slurm-job\":\"42\"")
        .contains("\"kse.io/slurm-node\":\"gpu-node-3\"")
        .contains("\"nominatedNodeName\":\"gpu-node-3\"")
        .contains("\"status\":\"True\",\"reason\":\"Allocated\"");
  }

  @Test
  void aGatedPodIsNominatedFirstThenOnlyOurGateIsLifted() throws Exception {
    String pod = "/api/v1/namespaces/serving/pods/llm-1";
    String answer = "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"llm-1\"}}";
    server.expect().patch().withPath(pod + "/status").andReturn(200, answer).once();
    server.expect().patch().withPath(pod).andReturn(200, answer).once();
    int before = server.getRequestCount();
    new FabricPodActions(client, Clock.systemUTC())
        .wake(
            new PodRef("serving", "llm-1", "uid-2"),
            "gpu-node-4",
            43,
            PodActions.WakeUp.NOMINATE_THEN_UNGATE);
    assertThat(server.getRequestCount() - before).isEqualTo(2);
    var status = takeFor(pod + "/status");
    assertThat(status.getBody().readUtf8())
        .contains("\"kse.io/slurm-job\":\"43\"")
        .contains("\"nominatedNodeName\":\"gpu-node-4\"");
    var gate = server.takeRequest();
    assertThat(gate.getPath()).as("the gate after the nomination").isEqualTo(pod);
    assertThat(gate.getHeader("Content-Type")).contains("strategic-merge-patch+json");
    assertThat(gate.getBody().readUtf8())
        .contains("\"uid\":\"uid-2\"")
        .contains(
            "\"schedulingGates\":[{\"name\":\"kse.io/slurm-allocation\",\"$patch\":\"delete\"}]");
  }

  @Test
  void aGatedPodNobodyToldItWaitsIsWokenByOnePatchOfThePodAndNoStatusWrite() throws Exception {
    // issue 30: the status write (nomination, Allocated condition) was a second write per pod
    String pod = "/api/v1/namespaces/serving/pods/llm-6";
    String answer = "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"llm-6\"}}";
    server.expect().patch().withPath(pod).andReturn(200, answer).once();
    int before = server.getRequestCount();
    boolean woken =
        new FabricPodActions(client, Clock.systemUTC())
            .wake(
                new PodRef("serving", "llm-6", "uid-6"),
                "gpu-node-5",
                46,
                PodActions.WakeUp.UNGATE);
    assertThat(woken).isTrue();
    assertThat(server.getRequestCount() - before).isEqualTo(1);
    var patch = takeFor(pod);
    assertThat(patch.getHeader("Content-Type")).contains("strategic-merge-patch+json");
    assertThat(patch.getBody().readUtf8())
        .isEqualTo(
            "{\"metadata\":{\"uid\":\"uid-6\",\"annotations\":{\"kse.io/slurm-job\":\"46\","
                + "\"kse.io/slurm-node\":\"gpu-node-5\"}},\"spec\":{\"schedulingGates\":"
                + "[{\"name\":\"kse.io/slurm-allocation\",\"$patch\":\"delete\"}]}}");
  }

  @Test
  void aPodReplacedBeforeItsWakeUpIsNotTriedAgainAndItsGateStays() throws Exception {
    String pod = "/api/v1/namespaces/serving/pods/llm-4";
    server
        .expect()
        .patch()
        .withPath(pod + "/status")
        .andReturn(409, "{\"kind\":\"Status\",\"code\":409,\"reason\":\"Conflict\"}")
        .once();
    int before = server.getRequestCount();
    boolean done =
        new FabricPodActions(client, Clock.systemUTC())
            .wake(
                new PodRef("serving", "llm-4", "uid-old"),
                "gpu-node-1",
                44,
                PodActions.WakeUp.NOMINATE_THEN_UNGATE);
    assertThat(done).as("a UID mismatch: that pod is gone, nothing to retry").isTrue();
    assertThat(server.getRequestCount() - before).as("no gate lift for another pod").isEqualTo(1);
  }

  @Test
  void aServerWithoutStrategicMergeGetsTheWakeUpAsAMergePatchWithoutConditions() throws Exception {
    // found by ExtenderLifecycleIT: fabric8's mock API server answers a strategic merge with 415
    String pod = "/api/v1/namespaces/serving/pods/llm-5";
    String answer = "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"llm-5\"}}";
    server.expect().patch().withPath(pod + "/status").andReturn(415, "{\"code\":415}").once();
    server.expect().patch().withPath(pod + "/status").andReturn(200, answer).once();
    boolean woken =
        new FabricPodActions(client, Clock.systemUTC())
            .wake(
                new PodRef("serving", "llm-5", "uid-5"),
                "gpu-node-2",
                45,
                PodActions.WakeUp.NOMINATE);
    assertThat(woken).isTrue();
    takeFor(pod + "/status");
    var merge = takeFor(pod + "/status");
    assertThat(merge.getHeader("Content-Type")).contains("application/merge-patch+json");
    assertThat(merge.getBody().readUtf8())
        .contains("\"nominatedNodeName\":\"gpu-node-2\"")
        .contains("\"kse.io/slurm-job\":\"45\"")
        .doesNotContain("conditions");
  }

  /** The next request to {@code path}, skipping other tests' requests on the shared server. */
  private static io.fabric8.mockwebserver.http.RecordedRequest takeFor(String path)
      throws Exception {
    var r = server.takeRequest();
    while (!r.getPath().equals(path)) {
      r = server.takeRequest();
    }
    return r;
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
