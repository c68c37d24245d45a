package io.kse.slurm;

/**
 * Slurm (or this bridge, before sending) refused the request as invalid; the message carries
 * Slurm's own error text.
 */
public final class SlurmRejectedException extends SlurmException {
  public SlurmRejectedException(String message) {
    super(message, null);
  }

  public SlurmRejectedException(String message, Throwable cause) {
    super(message, cause);
  }
}
