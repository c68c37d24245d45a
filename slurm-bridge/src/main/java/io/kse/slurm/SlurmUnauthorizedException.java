package io.kse.slurm;

/** The JWT is missing, malformed, expired or not accepted by slurmctld. */
public final class SlurmUnauthorizedException extends SlurmException {
  public SlurmUnauthorizedException(String message) {
    super(message, null);
  }

  public SlurmUnauthorizedException(String message, Throwable cause) {
    super(message, cause);
  }
}
