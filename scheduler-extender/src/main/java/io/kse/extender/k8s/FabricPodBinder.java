package io.kse.extender.k8s;

import io.fabric8.kubernetes.api.model.Binding;
import io.fabric8.kubernetes.api.model.BindingBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Binds through the API server with the pod's UID as precondition, so a pod recreated under the
 * same name is never bound to a node chosen for its predecessor. Maps the API server's answers (see
 * extender-protocol §6.4) to {@link PodBinder.Result}s.
 */
public final class FabricPodBinder implements PodBinder {
  private static final Pattern ASSIGNED =
      Pattern.compile("is already assigned to node \"([^\"]+)\"");

  private final KubernetesClient client;

  public FabricPodBinder(KubernetesClient client) {
    this.client = client;
  }

  @Override
  public Outcome bind(PodRef pod, String node) {
    Binding b =
        new BindingBuilder()
            .withNewMetadata()
            .withName(pod.name())
            .withNamespace(pod.namespace())
            .withUid(pod.uid())
            .endMetadata()
            .withNewTarget()
            .withApiVersion("v1")
            .withKind("Node")
            .withName(node)
            .endTarget()
            .build();
    try {
      client.bindings().inNamespace(pod.namespace()).resource(b).create();
      return new Outcome(Result.BOUND, "bound to " + node);
    } catch (KubernetesClientException e) {
      return classify(e.getCode(), e.getMessage() == null ? "" : e.getMessage(), node);
    }
  }

  static Outcome classify(int code, String message, String node) {
    if (code == 404) {
      return new Outcome(Result.POD_GONE, "pod not found");
    }
    if (code == 409) {
      Matcher m = ASSIGNED.matcher(message);
      if (m.find()) {
        return m.group(1).equals(node)
            ? new Outcome(Result.ALREADY_BOUND_HERE, "already bound to " + node)
            : new Outcome(Result.ALREADY_BOUND_ELSEWHERE, "already bound to " + m.group(1));
      }
      if (message.contains("Precondition failed: UID")) {
        return new Outcome(Result.UID_MISMATCH, "the pod was recreated (UID precondition failed)");
      }
      if (message.contains("is being deleted")) {
        return new Outcome(Result.BEING_DELETED, "the pod is being deleted");
      }
    }
    return new Outcome(Result.FAILED, "binding failed (HTTP " + code + "): " + message);
  }
}
