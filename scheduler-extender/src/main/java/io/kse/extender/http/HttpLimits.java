package io.kse.extender.http;

import java.time.Duration;
import java.util.function.IntSupplier;

/**
 * What any mix of callers may cost the service, so no request or set of requests can exhaust its
 * memory or its threads: beyond each limit callers get 413, 408 or 503 and the service stays up.
 *
 * @param bodyBytes the largest request body
 * @param inFlightBytes request body bytes held at once over every connection (received, not yet
 *     answered)
 * @param maxConnections open connections; more are closed at once
 * @param bodyTimeout how long a whole request body may take to arrive (stops half-sent uploads
 *     holding memory)
 * @param idleTimeout an idle connection is closed after this
 * @param headTimeout a new connection that has not sent a whole request head by then is closed (a
 *     client trickling its headers would otherwise hold it until the idle timeout)
 * @param verbThreads threads computing filter/prioritize/preempt answers (never the event loop)
 * @param queuedVerbs verb calls waiting for a thread; more are answered 503
 * @param bindThreads threads posting Bindings (an API call each)
 * @param nodeNamesFloor the fewest candidate nodes a request may always name (see {@link
 *     #nodeNamesFor})
 */
public record HttpLimits(
    long bodyBytes,
    long inFlightBytes,
    int maxConnections,
    Duration bodyTimeout,
    Duration idleTimeout,
    Duration headTimeout,
    int verbThreads,
    int queuedVerbs,
    int bindThreads,
    int nodeNamesFloor) {

  /**
   * How many candidate nodes one request may name: the cluster's size with room for nodes added
   * since the informer last spoke, and the floor for tiny clusters. Bounds parse and answer size.
   */
  public IntSupplier nodeNamesFor(IntSupplier knownNodes) {
    return () -> {
      int n = knownNodes.getAsInt();
      return Math.max(nodeNamesFloor, n + n / 10 + 100);
    };
  }

  /** Limits for tests: small bodies, generous everything else. */
  public static HttpLimits forTests(long bodyBytes) {
    return new HttpLimits(
        bodyBytes,
        bodyBytes * 4,
        64,
        Duration.ofSeconds(10),
        Duration.ofSeconds(60),
        Duration.ofSeconds(5),
        2,
        16,
        2,
        100_000);
  }
}
