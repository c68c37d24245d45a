package io.kse.slurm;

/**
 * Slurm is unavailable and the call never left this process (the circuit breaker is open, or too
 * many calls are in flight): unlike a timeout, nothing can have happened in Slurm, so a submission
 * refused this way made no job that a listing would have to find.
 */
public final class SlurmCallNotSentException extends SlurmUnavailableException {
  public SlurmCallNotSentException(String message, Throwable cause) {
    super(message, cause);
  }
}
