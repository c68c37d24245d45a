package io.kse.extender.http;

import io.vertx.core.Vertx;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.PoolOptions;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Slurm's hooks may reach any replica (one Service address for slurmctld off the cluster); what a
 * hint makes happen only on the writer (the preempted pod told, its tier charged) needs the writer
 * to hear it. A standby applies a hint itself and passes it on to the writer's advertised ops
 * address, with the hint token and a header saying it was forwarded, so it is never passed on
 * twice. Fire and forget: Slurm's hook has its answer already, and the writer's own checks catch
 * what a lost hint would have said.
 */
final class HintForwarder {
  private static final Logger LOG = LoggerFactory.getLogger(HintForwarder.class);

  /** Marks a forwarded hint; its value is the forwarding replica's identity. */
  static final String FORWARDED_BY = "X-KSE-Forwarded-By";

  private final BooleanSupplier isWriter;
  private final Supplier<Optional<String>> writerAddress;
  private final Optional<String> token;
  private final Consumer<String> outcome;
  private volatile HttpClient client;
  private volatile boolean saidNoToken;

  /**
   * @param outcome told "forwarded" or "forward_failed" for each hint passed on
   */
  HintForwarder(
      BooleanSupplier isWriter,
      Supplier<Optional<String>> writerAddress,
      Optional<String> token,
      Consumer<String> outcome) {
    this.isWriter = isWriter;
    this.writerAddress = writerAddress;
    this.token = token;
    this.outcome = outcome;
  }

  /** Passes {@code uri} (path and query) on to the writer, if this replica is not it. */
  void forward(Vertx vertx, String uri) {
    if (isWriter.getAsBoolean()) {
      return;
    }
    Optional<String> to = writerAddress.get();
    if (to.isEmpty()) {
      return; // no writer known, or it advertises no address: it sees the change at its next read
    }
    int colon = to.get().lastIndexOf(':');
    String host = to.get().substring(0, colon).replace("[", "").replace("]", "");
    int port = Integer.parseInt(to.get().substring(colon + 1));
    if (token.isEmpty() && !ExtenderServer.isLoopback(host)) {
      // the writer would refuse it (403): say so once, not once per hint
      if (!saidNoToken) {
        saidNoToken = true;
        LOG.warn(
            "hint_forward_off to={} reason=\"no KSE_ALLOCATION_HINT_TOKEN_FILE: the writer takes"
                + " hints from loopback only; give every replica the hint token\"",
            to.get());
      }
      return;
    }
    client(vertx)
        .request(HttpMethod.POST, port, host, uri)
        .compose(
            req -> {
              req.putHeader(FORWARDED_BY, "standby");
              token.ifPresent(t -> req.putHeader("Authorization", "Bearer " + t));
              return req.send();
            })
        .onSuccess(
            resp -> {
              outcome.accept(resp.statusCode() == 202 ? "forwarded" : "forward_failed");
              if (resp.statusCode() != 202) {
                LOG.warn("hint_forward_refused to={} status={}", to.get(), resp.statusCode());
              }
            })
        .onFailure(
            e -> {
              outcome.accept("forward_failed");
              LOG.warn("hint_forward_failed to={} error={}", to.get(), e.toString());
            });
  }

  private HttpClient client(Vertx vertx) {
    HttpClient c = client;
    if (c == null) {
      synchronized (this) {
        if (client == null) {
          client =
              vertx.createHttpClient(
                  new HttpClientOptions().setConnectTimeout(1_000).setIdleTimeout(30),
                  new PoolOptions().setHttp1MaxSize(4));
        }
        c = client;
      }
    }
    return c;
  }
}
