package io.kse.extender.http;

import com.fasterxml.jackson.databind.JsonNode;
import io.kse.extender.filter.BindService;
import io.kse.extender.wire.BadExtenderRequestException;
import io.kse.extender.wire.PodRef;

/**
 * bind: the arguments are only a claim. {@link BindService} acts on the pod the extender itself
 * knows under that UID, and nothing a caller says can cancel or evict anything.
 */
final class BindRoute {
  /** ExtenderBindingArgs are four short strings; anything larger is not kube-scheduler. */
  static final int MAX_BODY = 64 * 1024;

  private final BindService bind;

  BindRoute(BindService bind) {
    this.bind = bind;
  }

  VerbRunner.Answer bind(byte[] body) {
    if (body.length > MAX_BODY) {
      throw new BadExtenderRequestException(
          "ExtenderBindingArgs of " + body.length + " bytes; at most " + MAX_BODY);
    }
    JsonNode args = FilterRoutes.tree(body, "ExtenderBindingArgs");
    PodRef pod =
        new PodRef(
            FilterRoutes.string(args, "PodNamespace", ""),
            FilterRoutes.string(args, "PodName", ""),
            FilterRoutes.string(args, "PodUID", ""));
    String node = FilterRoutes.string(args, "Node", "");
    if (pod.name().isEmpty() || pod.uid().isEmpty() || node.isEmpty()) {
      throw new BadExtenderRequestException("ExtenderBindingArgs needs PodName, PodUID and Node");
    }
    String error = bind.bind(pod, node);
    return new VerbRunner.Answer(
        Responses.protocolError(error), error.isEmpty() ? "bound" : "refused");
  }
}
