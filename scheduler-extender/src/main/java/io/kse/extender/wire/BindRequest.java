package io.kse.extender.wire;

import com.fasterxml.jackson.databind.JsonNode;
import io.kse.extender.k8s.PodRef;

/** kube-scheduler's {@code ExtenderBindingArgs}: which pod (a claim to check) and which node. */
public record BindRequest(PodRef pod, String node) {
  /** ExtenderBindingArgs are four short strings; anything larger is not kube-scheduler. */
  public static final int MAX_BODY = 64 * 1024;

  public static BindRequest parse(byte[] body) {
    if (body.length > MAX_BODY) {
      throw new BadExtenderRequestException(
          "ExtenderBindingArgs of " + body.length + " bytes; at most " + MAX_BODY);
    }
    JsonNode args = WireJson.object(body, "ExtenderBindingArgs");
    PodRef pod =
        new PodRef(
            WireJson.string(args, "PodNamespace", ""),
            WireJson.string(args, "PodName", ""),
            WireJson.string(args, "PodUID", ""));
    String node = WireJson.string(args, "Node", "");
    if (pod.name().isEmpty() || pod.uid().isEmpty() || node.isEmpty()) {
      throw new BadExtenderRequestException("ExtenderBindingArgs needs PodName, PodUID and Node");
    }
    return new BindRequest(pod, node);
  }
}
