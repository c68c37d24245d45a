package io.kse.extender.http;

import io.kse.extender.metrics.ExtenderMetrics;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.ext.web.RoutingContext;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Receives a JSON request body within {@link HttpLimits}: a per-request size, a budget of body
 * bytes held over all connections, and a deadline for the whole body. A request over a limit is
 * answered (413, 415, 408, 503) and its connection closed, so its bytes are never read or kept. The
 * body goes to the next handler as {@code byte[]} under {@link #KEY}.
 */
final class BoundedBody implements Handler<RoutingContext> {
  static final String KEY = "kse.body";

  private final Vertx vertx;
  private final HttpLimits limits;
  private final ExtenderMetrics metrics;
  private final AtomicLong inFlight = new AtomicLong();

  BoundedBody(Vertx vertx, HttpLimits limits, ExtenderMetrics metrics) {
    this.vertx = vertx;
    this.limits = limits;
    this.metrics = metrics;
  }

  /** Body bytes held right now (for tests and the gauge). */
  long inFlightBytes() {
    return inFlight.get();
  }

  @Override
  public void handle(RoutingContext ctx) {
    HttpServerRequest req = ctx.request();
    String type = req.getHeader("Content-Type");
    if (type != null
        && !type.isBlank()
        && !type.toLowerCase(java.util.Locale.ROOT).contains("json")) {
      refuse(
          ctx, 415, "UnsupportedMediaType", "request bodies must be application/json, not " + type);
      return;
    }
    long declared = declaredLength(req);
    if (declared > limits.bodyBytes()) {
      refuse(ctx, 413, "PayloadTooLarge", "request body exceeds " + limits.bodyBytes() + " bytes");
      return;
    }
    if (declared > 0 && inFlight.get() + declared > limits.inFlightBytes()) {
      refuse(ctx, 503, "Busy", "too many request bytes in flight; retry");
      return;
    }
    new Reception(ctx).start();
  }

  /** One request's body: reserves bytes as they arrive and gives them back exactly once. */
  private final class Reception {
    private final RoutingContext ctx;
    private final Buffer body = Buffer.buffer();
    private long reserved;
    private boolean finished;
    private long timer;

    Reception(RoutingContext ctx) {
      this.ctx = ctx;
    }

    void start() {
      HttpServerRequest req = ctx.request();
      ctx.addEndHandler(r -> release()); // answered, failed or the connection closed
      timer =
          vertx.setTimer(
              limits.bodyTimeout().toMillis(),
              t ->
                  fail(
                      408,
                      "RequestTimeout",
                      "the request body did not arrive within "
                          + limits.bodyTimeout().toMillis()
                          + " ms"));
      req.handler(this::chunk);
      req.exceptionHandler(e -> release());
      req.endHandler(
          v -> {
            if (finished) {
              return;
            }
            finished = true;
            vertx.cancelTimer(timer);
            ctx.put(KEY, body.getBytes());
            ctx.next();
          });
      req.resume(); // the router paused it
    }

    private void chunk(Buffer b) {
      if (finished) {
        return;
      }
      if (body.length() + b.length() > limits.bodyBytes()) {
        fail(413, "PayloadTooLarge", "request body exceeds " + limits.bodyBytes() + " bytes");
        return;
      }
      if (!reserve(b.length())) {
        fail(503, "Busy", "too many request bytes in flight; retry");
        return;
      }
      reserved += b.length();
      body.appendBuffer(b);
    }

    private void fail(int status, String error, String message) {
      if (finished) {
        return;
      }
      finished = true;
      vertx.cancelTimer(timer);
      release();
      refuse(ctx, status, error, message);
    }

    private void release() {
      if (reserved > 0) {
        inFlight.addAndGet(-reserved);
        reserved = 0;
      }
    }
  }

  /** Takes {@code n} bytes of the budget, or none if that would exceed it. */
  private boolean reserve(long n) {
    long held;
    do {
      held = inFlight.get();
      if (held + n > limits.inFlightBytes()) {
        return false;
      }
    } while (!inFlight.compareAndSet(held, held + n));
    return true;
  }

  private void refuse(RoutingContext ctx, int status, String error, String message) {
    metrics.refused(error);
    Responses.problemAndClose(ctx, status, error, message);
  }

  private static long declaredLength(HttpServerRequest req) {
    String len = req.getHeader("Content-Length");
    if (len == null) {
      return -1;
    }
    try {
      return Long.parseLong(len.trim());
    } catch (NumberFormatException e) {
      return -1;
    }
  }
}
