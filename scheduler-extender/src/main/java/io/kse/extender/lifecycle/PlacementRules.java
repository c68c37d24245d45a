package io.kse.extender.lifecycle;

import io.kse.extender.lifecycle.PlacementFacts.PodStanding;
import io.kse.slurm.JobState;
import io.kse.slurm.SlurmJob;
import java.util.Optional;
import java.util.function.UnaryOperator;

/**
 * The reconciler's rules: from what is true now, what must be done. The invariant they keep: a pod
 * runs if and only if its Slurm job holds its node, and a job lives exactly as long as its pod.
 * Pure: no I/O, no clock, no memory of earlier passes.
 */
public final class PlacementRules {
  private final UnaryOperator<String> kubeNodeName;

  /**
   * @param kubeNodeName the Kubernetes name of a Slurm node
   */
  public PlacementRules(UnaryOperator<String> kubeNodeName) {
    this.kubeNodeName = kubeNodeName;
  }

  public Step decide(PlacementFacts f) {
    Optional<SlurmJob> live = f.job().filter(j -> !j.state().isFinal());
    Optional<Long> inFlight = f.submittedNotSeen();
    switch (f.pod()) {
      case ABSENT, TERMINAL, DELETING_UNBOUND -> {
        String why =
            f.pod() == PodStanding.ABSENT
                ? "pod deleted"
                : f.pod() == PodStanding.TERMINAL ? "pod finished" : "pod deleted before binding";
        if (live.isPresent()) {
          return new Step.Cancel(live.get().id(), why);
        }
        if (inFlight.isPresent()) {
          return new Step.Cancel(inFlight.get(), why); // submitted, not yet in the cache
        }
        return f.own().isPresent() ? new Step.Forget() : Step.STEADY;
      }
      case BOUND -> {
        return bound(f, live);
      }
      case TERMINATING -> {
        return Step.STEADY; // already going; its job (if any) is kept until it is gone
      }
      default -> {
        return pending(f, live, inFlight);
      }
    }
  }

  /** A bound pod may run only while its job holds its node. */
  private Step bound(PlacementFacts f, Optional<SlurmJob> live) {
    if (live.isPresent()
        && live.get().state().holdsNodes()
        && live.get().state() != JobState.COMPLETING
        && live.get().nodes().stream().map(kubeNodeName).anyMatch(f.boundNode()::equals)) {
      return Step.STEADY;
    }
    String why =
        f.job()
            .map(
                j ->
                    "Slurm job "
                        + j.id()
                        + (j.state().isFinal()
                            ? " ended (" + j.state() + ")"
                            : j.state() == JobState.PENDING
                                ? " was requeued (" + j.stateReason() + ")"
                                : " is " + j.state() + " and no longer holds " + f.boundNode()))
            .orElse("no Slurm job holds " + f.boundNode() + " for this pod");
    // a requeued placeholder must not come back later for a pod that is gone
    long cancel =
        live.filter(j -> j.state() == JobState.PENDING || !j.state().holdsNodes())
            .map(SlurmJob::id)
            .orElse(0L);
    return new Step.Evict(why, cancel);
  }

  private Step pending(PlacementFacts f, Optional<SlurmJob> live, Optional<Long> inFlight) {
    if (f.own().orElse(null) instanceof PlaceholderState.Rejected) {
      return Step.STEADY; // the reason is on the pod; a new pod gets a new decision
    }
    if (live.isPresent()) {
      SlurmJob j = live.get();
      if (j.isAllocated()) {
        if (f.unusableNode().isPresent()) {
          return new Step.Replace(j.id(), f.unusableNode().get());
        }
        return f.woken()
            ? Step.STEADY
            : new Step.Wake(j.id(), kubeNodeName.apply(j.nodes().get(0)));
      }
      if (j.state() == JobState.PENDING) {
        return new Step.Waiting(
            "SlurmPending", "waiting for Slurm job " + j.id() + " (" + j.stateReason() + ")");
      }
      return Step.STEADY; // completing, suspended: the next change decides
    }
    PlaceholderState own = f.own().orElse(null);
    if (own instanceof PlaceholderState.Submitting || inFlight.isPresent()) {
      return Step.STEADY;
    }
    if (own instanceof PlaceholderState.SubmitFailed failed && !f.retryDue()) {
      return new Step.Waiting(
          "SubmitFailed", "the Slurm placeholder could not be submitted: " + failed.reason());
    }
    return new Step.Submit(
        f.job()
            .map(j -> "Slurm job " + j.id() + " ended (" + j.state() + ") before the pod was bound")
            .orElse("no placeholder yet"));
  }
}
