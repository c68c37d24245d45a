package io.kse.extender.http;

import io.kse.extender.log.LogBudget;
import io.kse.extender.log.Untrusted;
import io.kse.extender.metrics.ExtenderMetrics;
import io.kse.extender.wire.BadExtenderRequestException;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.ext.web.RoutingContext;
import java.time.Clock;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs a verb's work on a bounded pool, never on the event loop, and renders its outcome: the
 * answer (200), a malformed request (400, logged within a budget), a crash (500, logged with its
 * stack and metered as {@code error}), or a full pool (503).
 */
final class VerbRunner {
  private static final Logger LOG = LoggerFactory.getLogger(VerbRunner.class);

  /** A verb's answer and the outcome tag for its latency metric. */
  record Answer(byte[] body, String outcome) {}

  interface Work {
    Answer handle(byte[] body);
  }

  private final ExecutorService pool;
  private final ExtenderMetrics metrics;
  private final LogBudget badRequestLog;

  VerbRunner(ExecutorService pool, ExtenderMetrics metrics, Clock clock) {
    this.pool = pool;
    this.metrics = metrics;
    this.badRequestLog = new LogBudget(clock, 1000, 5);
  }

  void run(RoutingContext ctx, String verb, Work work) {
    long start = System.nanoTime();
    byte[] body = ctx.get(BoundedBody.KEY);
    Context loop = Vertx.currentContext();
    try {
      pool.execute(
          () -> {
            Rendered r = compute(verb, work, body == null ? new byte[0] : body);
            metrics.verb(verb, r.outcome, System.nanoTime() - start);
            loop.runOnContext(v -> r.send(ctx));
          });
    } catch (RejectedExecutionException e) {
      metrics.refused("Busy");
      metrics.verb(verb, "busy", System.nanoTime() - start);
      Responses.problem(ctx, 503, "Busy", "the extender is busy; retry");
    }
  }

  private record Rendered(int status, byte[] body, String error, String message, String outcome) {
    void send(RoutingContext ctx) {
      if (body != null) {
        Responses.json(ctx, status, body);
      } else {
        Responses.problem(ctx, status, error, message);
      }
    }
  }

  private Rendered compute(String verb, Work work, byte[] body) {
    try {
      Answer a = work.handle(body);
      return new Rendered(200, a.body(), null, null, a.outcome());
    } catch (BadExtenderRequestException e) {
      badRequest(verb, e.getMessage());
      return new Rendered(400, null, "BadRequest", e.getMessage(), "bad_request");
    } catch (RuntimeException e) {
      LOG.error("verb_crashed verb={}", verb, e);
      return new Rendered(
          500, null, "InternalError", "internal error; see the extender's log", "error");
    }
  }

  /** A malformed request: counted always, logged a few times a second at most, escaped. */
  void badRequest(String verb, String message) {
    metrics.badRequest(verb);
    long dropped = badRequestLog.admit();
    if (dropped >= 0) {
      LOG.info(
          "bad_request verb={} message=\"{}\" suppressedSinceLast={}",
          verb,
          Untrusted.text(message),
          dropped);
    }
  }
}
