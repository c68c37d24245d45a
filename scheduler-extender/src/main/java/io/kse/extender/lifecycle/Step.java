package io.kse.extender.lifecycle;

/** What the reconciler does for one placement on one pass; {@link PlacementRules} decides it. */
public sealed interface Step {
  /** Nothing to do: the placement is as it must be, or waits on Slurm or on something in flight. */
  record Steady() implements Step {}

  /** The pod waits for its job: tell it why (pod condition and Event, when the reason changes). */
  record Waiting(String reason, String message) implements Step {}

  /** The pod needs a placeholder: submit one. */
  record Submit(String why) implements Step {}

  /** Slurm allocated {@code node} to the pod's job {@code jobId}: let the pod go there. */
  record Wake(long jobId, String node) implements Step {}

  /** The job must end: the pod is gone, or will never use it. */
  record Cancel(long jobId, String why) implements Step {}

  /** The job holds a node the pod cannot go to: end it (a new one is submitted next pass). */
  record Replace(long jobId, String why) implements Step {}

  /**
   * The pod runs where no job holds its node: evict it; and end {@code jobToCancel} (a requeued
   * placeholder that would otherwise come back for a pod that is gone), if not 0.
   */
  record Evict(String why, long jobToCancel) implements Step {}

  /** The job is gone and nothing is in flight: forget what the extender remembered. */
  record Forget() implements Step {}

  Step STEADY = new Steady();
}
