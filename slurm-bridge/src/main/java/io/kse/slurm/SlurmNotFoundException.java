package io.kse.slurm;

/** The job or node does not exist in Slurm (a definite answer from slurmctld, not a guess). */
public final class SlurmNotFoundException extends SlurmException {
  public SlurmNotFoundException(String message) {
    super(message, null);
  }

  public SlurmNotFoundException(String message, Throwable cause) {
    super(message, cause);
  }
}
