package io.kse.extender.http;

import io.kse.extender.bind.BindService;
import io.kse.extender.wire.BindRequest;

/**
 * bind: the arguments are only a claim. {@link BindService} acts on the pod the extender itself
 * knows under that UID, and nothing a caller says can cancel or evict anything.
 */
final class BindRoute {
  private final BindService bind;

  BindRoute(BindService bind) {
    this.bind = bind;
  }

  VerbRunner.Answer bind(byte[] body) {
    BindRequest req = BindRequest.parse(body);
    String error = bind.bind(req.pod(), req.node());
    return new VerbRunner.Answer(
        Responses.protocolError(error), error.isEmpty() ? "bound" : "refused");
  }
}
