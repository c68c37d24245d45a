package io.kse.extender;

import io.kse.slurm.ForwardingSlurmClient;
import io.kse.slurm.SlurmClient;
import io.kse.slurm.SlurmException;
import io.kse.slurm.SlurmUnavailableException;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A client that is connected later (version discovery needs slurmrestd up): until then every call
 * fails as unavailable, so the service can start, answer health checks and report not-ready.
 */
final class DeferredSlurmClient extends ForwardingSlurmClient {
  private static final Logger LOG = LoggerFactory.getLogger(DeferredSlurmClient.class);

  /** How a client is made: version discovery and all; throws while slurmrestd does not answer. */
  interface Connecting {
    SlurmClient connect() throws SlurmException;
  }

  private volatile SlurmClient delegate;
  private volatile String lastError = "not connected yet";

  void connected(SlurmClient c) {
    delegate = c;
  }

  void failed(String error) {
    lastError = error;
  }

  boolean isConnected() {
    return delegate != null;
  }

  /**
   * Tries to connect until it does or {@code stopped} holds, waiting 0.5 s, 1 s … 10 s between
   * attempts; each failure is logged and is what calls fail with meanwhile.
   */
  void connectUntil(Connecting connecting, String url, BooleanSupplier stopped) {
    long delay = 500;
    while (!isConnected() && !stopped.getAsBoolean()) {
      try {
        connected(connecting.connect());
        LOG.info("slurm_connected url={} apiVersion={}", url, apiVersion().id());
      } catch (SlurmException e) {
        failed(e.getMessage());
        LOG.warn("slurm_connect_failed url={} retryInMs={} error={}", url, delay, e.getMessage());
        try {
          Thread.sleep(delay);
        } catch (InterruptedException interrupted) {
          Thread.currentThread().interrupt();
          return;
        }
        delay = Math.min(delay * 2, 10_000);
      }
    }
  }

  @Override
  protected SlurmClient delegate() {
    SlurmClient c = delegate;
    if (c == null) {
      throw new SlurmUnavailableException("slurmrestd not connected: " + lastError);
    }
    return c;
  }

  @Override
  public void close() {
    if (delegate != null) {
      delegate.close();
    }
  }
}
