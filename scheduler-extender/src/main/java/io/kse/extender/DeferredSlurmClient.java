package io.kse.extender;

import io.kse.slurm.ForwardingSlurmClient;
import io.kse.slurm.SlurmClient;
import io.kse.slurm.SlurmUnavailableException;

/**
 * A client that is connected later (version discovery needs slurmrestd up): until then every call
 * fails as unavailable, so the service can start, answer health checks and report not-ready.
 */
final class DeferredSlurmClient extends ForwardingSlurmClient {
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
