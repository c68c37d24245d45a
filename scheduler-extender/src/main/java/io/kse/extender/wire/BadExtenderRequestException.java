package io.kse.extender.wire;

/** A request kube-scheduler (or anyone) sent that cannot be read; answered with HTTP 400. */
public final class BadExtenderRequestException extends RuntimeException {
  public BadExtenderRequestException(String message) {
    super(message, null, false, false);
  }

  public BadExtenderRequestException(String message, Throwable cause) {
    super(message, cause, false, false);
  }
}
