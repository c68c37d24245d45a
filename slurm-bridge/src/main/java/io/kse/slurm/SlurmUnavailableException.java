package io.kse.slurm;

/**
 * slurmrestd or slurmctld could not be reached, timed out, was overloaded, or the circuit breaker
 * is open. Retryable.
 */
public final class SlurmUnavailableException extends SlurmException {
  public SlurmUnavailableException(String message) {
    super(message, null);
  }

  public SlurmUnavailableException(String message, Throwable cause) {
    super(message, cause);
  }
}
