package io.kse.slurm;

/**
 * A placeholder job that cannot be made from what it was given (a field out of range, a name Slurm
 * would refuse): said before anything is sent to Slurm. Named, so that callers refuse the placement
 * for this reason and a bug elsewhere is not mistaken for one.
 */
public final class InvalidSubmission extends IllegalArgumentException {
  public InvalidSubmission(String message) {
    super(message);
  }
}
