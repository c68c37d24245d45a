package io.kse.extender.k8s;

/** Posts the pod's Binding; the seam between bind logic and the API server. */
public interface PodBinder {
  /** How a binding attempt ended. */
  enum Result {
    BOUND,
    /** Already bound to this very node: a retried bind, success. */
    ALREADY_BOUND_HERE,
    ALREADY_BOUND_ELSEWHERE,
    /** 404: the pod no longer exists. */
    POD_GONE,
    /** 409 on the UID precondition: a new pod with the same name. */
    UID_MISMATCH,
    BEING_DELETED,
    FAILED
  }

  record Outcome(Result result, String message) {
    public boolean ok() {
      return result == Result.BOUND || result == Result.ALREADY_BOUND_HERE;
    }
  }

  Outcome bind(PodRef pod, String node);
}
