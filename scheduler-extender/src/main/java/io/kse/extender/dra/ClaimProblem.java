package io.kse.extender.dra;

/** A pod's ResourceClaims cannot be served from Slurm's allocation: the message says why. */
public final class ClaimProblem extends RuntimeException {
  public ClaimProblem(String message) {
    super(message);
  }
}
