package io.kse.extender.k8s;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import org.junit.jupiter.api.Test;

@EnableKubernetesMockClient(crud = true)
class FabricPodBinderTest {
  static KubernetesClient client;
  static KubernetesMockServer server;

  @Test
  void postsABindingWithThePodUidAsPrecondition() throws Exception {
    server
        .expect()
        .post()
        .withPath("/api/v1/namespaces/serving/bindings")
        .andReturn(201, "{}")
        .once();
    PodBinder.Outcome o =
        new FabricPodBinder(client).bind(new PodRef("serving", "llm-0", "uid-1"), "gpu-node-3");
    assertThat(o.result()).isEqualTo(PodBinder.Result.BOUND);
    String body = server.getLastRequest().getBody().readUtf8();
    assertThat(body)
        .contains("\"uid\":\"uid-1\"")
        .contains("\"name\":\"gpu-node-3\"")
        .contains("\"kind\":\"Node\"");
  }

  @Test
  void mapsTheApiServersRefusals() {
    assertThat(FabricPodBinder.classify(404, "pods \"x\" not found", "n").result())
        .isEqualTo(PodBinder.Result.POD_GONE);
    assertThat(
            FabricPodBinder.classify(409, "pod x is already assigned to node \"n\"", "n").result())
        .isEqualTo(PodBinder.Result.ALREADY_BOUND_HERE);
    assertThat(
            FabricPodBinder.classify(409, "pod x is already assigned to node \"m\"", "n").result())
        .isEqualTo(PodBinder.Result.ALREADY_BOUND_ELSEWHERE);
    assertThat(
            FabricPodBinder.classify(
                    409,
                    "Operation cannot be fulfilled on pods/binding \"x\": StorageError: invalid"
                        + " object, Code: 4, Key: /registry/pods/ns/x, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed:"
                        + " UID in precondition: a, UID in object meta: b",
                    "n")
                .result())
        .isEqualTo(PodBinder.Result.UID_MISMATCH);
    assertThat(
            FabricPodBinder.classify(
                    409, "pod x is being deleted, cannot be assigned to a host", "n")
                .result())
        .isEqualTo(PodBinder.Result.BEING_DELETED);
    assertThat(FabricPodBinder.classify(500, "etcd timeout", "n").result())
        .isEqualTo(PodBinder.Result.FAILED);
  }

  @Test
  void anHttp404FromTheServerIsPodGone() {
    server
        .expect()
        .post()
        .withPath("/api/v1/namespaces/serving/bindings")
        .andReturn(
            404,
            new io.fabric8.kubernetes.api.model.StatusBuilder()
                .withCode(404)
                .withMessage("pods \"gone\" not found")
                .build())
        .once();
    assertThat(new FabricPodBinder(client).bind(new PodRef("serving", "gone", "u"), "n").result())
        .isEqualTo(PodBinder.Result.POD_GONE);
  }
}
