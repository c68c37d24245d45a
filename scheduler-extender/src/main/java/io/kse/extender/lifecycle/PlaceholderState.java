package io.kse.extender.lifecycle;

import java.time.Instant;

/** What the extender itself knows about a pod's placeholder, before Slurm's view catches up. */
public sealed interface PlaceholderState {
  /** A submission is queued or in flight. */
  record Submitting(Instant since) implements PlaceholderState {}

  /** Slurm accepted the placeholder as this job. */
  record Submitted(long jobId, String tier, Instant at) implements PlaceholderState {}

  /**
   * The policy refused the pod, or the group; {@code reason} is stable for the pod, and for a group
   * as long as its members are {@code members} (their UIDs: a changed group is decided anew).
   */
  record Rejected(String reason, String members) implements PlaceholderState {
    public Rejected(String reason) {
      this(reason, "");
    }
  }

  /** Submitting failed; it is retried from {@code retryAt}. */
  record SubmitFailed(String reason, Instant retryAt, int attempts) implements PlaceholderState {}
}
