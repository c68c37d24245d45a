package io.kse.extender.dra;

/**
 * One device request of one of a pod's ResourceClaims, as far as GPU ownership cares.
 *
 * @param claim the claim's name (for a template, the pod's claim entry until the claim exists)
 * @param request the request's name within the claim
 * @param deviceClass its {@code deviceClassName}; empty for a {@code firstAvailable} request
 * @param allocationMode {@code ExactCount} (the default) or {@code All}
 * @param count how many devices it asks ({@code ExactCount})
 * @param firstAvailable whether it is a list of alternatives rather than one exact request
 * @param shares the share capacity it asks of one GPU (issue 46); 0: whole devices
 * @param migProfile the MIG profile its selector names (issue 46), e.g. {@code 1g.10gb}; empty: not
 *     a MIG request
 */
public record GpuRequest(
    String claim,
    String request,
    String deviceClass,
    String allocationMode,
    long count,
    boolean firstAvailable,
    long shares,
    String migProfile) {
  /** A request of whole devices. */
  public GpuRequest(
      String claim,
      String request,
      String deviceClass,
      String allocationMode,
      long count,
      boolean firstAvailable) {
    this(claim, request, deviceClass, allocationMode, count, firstAvailable, 0, "");
  }

  /** A request of whole devices or shares of one. */
  public GpuRequest(
      String claim,
      String request,
      String deviceClass,
      String allocationMode,
      long count,
      boolean firstAvailable,
      long shares) {
    this(claim, request, deviceClass, allocationMode, count, firstAvailable, shares, "");
  }

  /** Whether it asks MIG devices of a profile. */
  public boolean mig() {
    return !migProfile.isEmpty();
  }
}
