package io.kse.slurm;

/**
 * slurmrestd or slurmctld could not be reached, timed out, was overloaded, or the circuit breaker
 * is open. Retryable.
 */
public sealed class SlurmUnavailableException extends SlurmException
    permits SlurmCallNotSentException {
  public SlurmUnavailableException(String message) {
    super(message, null);
  }

  public SlurmUnavailableException(String message, Throwable cause) {
    super(message, cause);
  }
}
