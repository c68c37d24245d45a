package io.kse.extender.http;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.ext.web.RoutingContext;
import java.nio.charset.StandardCharsets;

/** The one place that renders answers and errors. */
final class Responses {
  private static final ObjectMapper JSON = new ObjectMapper();

  private Responses() {}

  static void json(RoutingContext ctx, int status, byte[] body) {
    HttpServerResponse r = ctx.response();
    if (r.ended() || r.closed()) {
      return;
    }
    r.setStatusCode(status).putHeader("Content-Type", "application/json").end(Buffer.buffer(body));
  }

  /**
   * {@code {"status":…, "error":…, "message":…}}; the message may quote the caller (escaped by
   * JSON).
   */
  static void problem(RoutingContext ctx, int status, String error, String message) {
    json(ctx, status, problemBody(status, error, message));
  }

  /**
   * A problem, then the connection closed: for refusals whose body was not read (too large, wrong
   * type, too slow), so the rest of it is never received.
   */
  static void problemAndClose(RoutingContext ctx, int status, String error, String message) {
    HttpServerResponse r = ctx.response();
    if (r.ended() || r.closed()) {
      ctx.request().connection().close();
      return;
    }
    r.setStatusCode(status)
        .putHeader("Content-Type", "application/json")
        .putHeader("Connection", "close")
        .end(Buffer.buffer(problemBody(status, error, message)))
        .onComplete(v -> ctx.request().connection().close());
  }

  /**
   * The extender protocol's own error field: kube-scheduler reads {@code Error}, not the status.
   */
  static byte[] protocolError(String error) {
    return utf8(JSON.createObjectNode().put("Error", error).toString());
  }

  static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static byte[] problemBody(int status, String error, String message) {
    ObjectNode o =
        JSON.createObjectNode().put("status", status).put("error", error).put("message", message);
    return utf8(o.toString());
  }
}
