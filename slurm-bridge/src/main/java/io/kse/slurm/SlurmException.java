package io.kse.slurm;

/**
 * Why a Slurm call failed. Callers branch on the type, never on the message: {@link
 * SlurmNotFoundException} (the job or node does not exist), {@link SlurmRejectedException} (Slurm
 * or this bridge refused the request as invalid; not retryable), {@link SlurmUnauthorizedException}
 * (token missing, invalid or expired) and {@link SlurmUnavailableException} (slurmrestd or
 * slurmctld unreachable, timing out or overloaded; retryable).
 */
public abstract sealed class SlurmException extends RuntimeException
    permits SlurmNotFoundException,
        SlurmRejectedException,
        SlurmUnauthorizedException,
        SlurmUnavailableException {

  protected SlurmException(String message, Throwable cause) {
    super(message, cause);
  }
}
