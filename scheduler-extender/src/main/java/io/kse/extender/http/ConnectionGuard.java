package io.kse.extender.http;

import io.kse.extender.metrics.ExtenderMetrics;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpServerRequest;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;

/**
 * The connections of one listener, so that no set of callers can take its capacity from everyone
 * else: each listener has its own count (the ops port open to the cluster cannot use up the verbs'
 * connections), a connection that has not sent a whole request head within {@code headTimeout} of
 * opening is closed (a client trickling its headers keeps a connection busy however long the idle
 * timeout is), and when the listener is full the connection that has waited longest without a
 * request in progress makes room for the newcomer instead of the newcomer being refused.
 */
final class ConnectionGuard {
  private final int maxConnections;
  private final long headTimeoutNanos;
  private final ExtenderMetrics metrics;
  private final LongSupplier nanoTime;
  private final AtomicInteger open = new AtomicInteger();

  /** Every open connection: busy with a request, or waiting for one since when. */
  private final Map<HttpConnection, State> connections = new ConcurrentHashMap<>();

  /**
   * @param since when it last became idle (nanos); {@code fresh}: it has not sent a whole request
   *     head yet
   */
  private record State(boolean busy, long since, boolean fresh) {
    static final State BUSY = new State(true, 0, false);
  }

  ConnectionGuard(
      int maxConnections, Duration headTimeout, ExtenderMetrics metrics, LongSupplier nanoTime) {
    this.maxConnections = maxConnections;
    this.headTimeoutNanos = headTimeout.toNanos();
    this.metrics = metrics;
    this.nanoTime = nanoTime;
  }

  /** Checks every second for connections whose head is overdue, until vertx closes. */
  void sweepEverySecond(Vertx vertx) {
    vertx.setPeriodic(1000, id -> closeOverdueHeads());
  }

  /** A new connection: counted, and room made for it (or it refused) when the listener is full. */
  void opened(HttpConnection conn) {
    connections.put(conn, new State(false, nanoTime.getAsLong(), true));
    conn.closeHandler(
        v -> {
          connections.remove(conn);
          open.decrementAndGet();
        });
    if (open.incrementAndGet() <= maxConnections) {
      return;
    }
    HttpConnection oldest = oldestWaiting(conn);
    if (oldest != null && connections.remove(oldest) != null) {
      metrics.refused("ConnectionEvicted");
      oldest.close();
    } else {
      metrics.refused("TooManyConnections");
      conn.close();
    }
  }

  /** A request's head arrived: its connection is busy until the response is written. */
  void requestStarted(HttpServerRequest request) {
    HttpConnection conn = request.connection();
    if (conn == null) {
      return;
    }
    connections.computeIfPresent(conn, (c, s) -> State.BUSY);
    // kept alive, it waits for its next request: evictable, and the idle timeout covers it
    request
        .response()
        .endHandler(
            v ->
                connections.computeIfPresent(
                    conn, (c, s) -> new State(false, nanoTime.getAsLong(), false)));
  }

  /** Open connections of this listener. */
  int open() {
    return open.get();
  }

  /** Closes every connection that has not sent its first request head within the deadline. */
  void closeOverdueHeads() {
    long now = nanoTime.getAsLong();
    connections.forEach(
        (conn, s) -> {
          if (s.fresh() && now - s.since() >= headTimeoutNanos && connections.remove(conn, s)) {
            metrics.refused("HeadTimeout");
            conn.close();
          }
        });
  }

  private HttpConnection oldestWaiting(HttpConnection except) {
    HttpConnection oldest = null;
    long since = Long.MAX_VALUE;
    for (Map.Entry<HttpConnection, State> e : connections.entrySet()) {
      if (e.getKey() != except && !e.getValue().busy() && e.getValue().since() < since) {
        since = e.getValue().since();
        oldest = e.getKey();
      }
    }
    return oldest;
  }
}
