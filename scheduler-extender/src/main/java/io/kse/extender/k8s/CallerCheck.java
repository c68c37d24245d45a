package io.kse.extender.k8s;

/**
 * Who may read a decision record over the network: the caller's bearer token must belong to someone
 * Kubernetes lets read pods in that namespace (the records name pod UIDs, job ids, nodes).
 */
public interface CallerCheck {
  enum Verdict {
    ALLOWED,
    /** No token, or one the API server does not accept. */
    UNAUTHENTICATED,
    /** A valid token of someone who may not read pods there. */
    FORBIDDEN
  }

  /** Blocking (API calls): never on the event loop. */
  Verdict mayReadPods(String bearerToken, String namespace);

  /** Everyone is refused: for tests of the routes alone. */
  static CallerCheck nobody() {
    return (token, namespace) -> Verdict.UNAUTHENTICATED;
  }
}
