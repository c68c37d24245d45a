package io.kse.extender.lifecycle;

import io.kse.extender.k8s.EventReason;
import io.kse.extender.k8s.PodRef;

/**
 * What the reconciler does for one placement on one pass; {@link PlacementRules} decides them.
 * Steps about the job are the placement's; steps about a pod name the member.
 */
public sealed interface Step {
  /** The member waits for the job: tell it why (pod condition and Event, when it changes). */
  record Waiting(PodRef member, WaitReason reason, String message) implements Step {}

  /** The placement needs a placeholder: submit one. */
  record Submit(String why) implements Step {}

  /** Slurm allocated {@code node} to the placement's job {@code jobId}: let the member go there. */
  record Wake(PodRef member, long jobId, String node) implements Step {}

  /** The job must end: every pod is gone, or none will ever use it. */
  record Cancel(long jobId, String why) implements Step {}

  /**
   * The job holds a node a member cannot go to, or is of a shape the placement no longer has: end
   * it (a new one is submitted next pass).
   */
  record Replace(long jobId, String why, EventReason reason) implements Step {
    public Replace(long jobId, String why) {
      this(jobId, why, EventReason.NODE_UNUSABLE);
    }
  }

  /**
   * The member runs where no job holds its node: evict it; and end {@code jobToCancel} (a requeued
   * placeholder that would otherwise come back for pods that are gone), if not 0.
   */
  record Evict(PodRef member, String why, long jobToCancel, EventReason reason) implements Step {
    public Evict(PodRef member, String why, long jobToCancel) {
      this(member, why, jobToCancel, EventReason.JOB_ENDED);
    }
  }

  /**
   * The member is being deleted but its kubelet has not confirmed its containers stopped, long past
   * its deadline: its job {@code jobId} is kept (its GPUs may still be in use), and users are told.
   */
  record HeldForTerminating(PodRef member, long jobId, String boundNode) implements Step {}

  /** The job is gone and nothing is in flight: forget what the extender remembered. */
  record Forget() implements Step {}

  /**
   * Holds the pending job behind {@code leader} (another of ours pending in its partition), or
   * releases it ({@code leader} 0) once none is: Slurm preempts for one of ours at a time.
   */
  record Queue(long jobId, long leader) implements Step {
    boolean release() {
      return leader == 0;
    }
  }
}
