package io.kse.extender.lifecycle;

import io.kse.extender.k8s.EventReason;
import io.kse.extender.k8s.PodActions;
import io.kse.extender.k8s.PodRef;

/**
 * A call the reconciler made on the Kubernetes side, as the tests record it: typed, so an absence
 * is checked on the kind of call (a renamed Event reason cannot make it pass), and printed as the
 * line most assertions read.
 */
sealed interface Recorded {
  record Event(PodRef pod, EventReason reason, String message) implements Recorded {
    @Override
    public String toString() {
      return "event " + reason.reason() + ": " + message;
    }
  }

  record Wake(PodRef pod, String node, long jobId, PodActions.WakeUp how) implements Recorded {
    @Override
    public String toString() {
      return "wake " + pod + " -> " + node;
    }
  }

  record Ungate(PodRef pod) implements Recorded {
    @Override
    public String toString() {
      return "ungate " + pod;
    }
  }

  record Evict(PodRef pod, String reason) implements Recorded {
    @Override
    public String toString() {
      return "evict " + pod + ": " + reason;
    }
  }

  record Delete(PodRef pod) implements Recorded {
    @Override
    public String toString() {
      return "delete " + pod;
    }
  }

  record Condition(PodRef pod, boolean allocated, String reason, String message)
      implements Recorded {
    @Override
    public String toString() {
      return "condition " + allocated + " " + reason + ": " + message;
    }
  }
}
