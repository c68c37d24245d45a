package io.kse.extender.filter;

import java.util.List;
import java.util.Locale;

/**
 * The answer for one pod: the nodes that pass, and one stable reason for all the others. Rejections
 * are unresolvable: Kubernetes preemption cannot free a node Slurm did not allocate.
 *
 * @param code why, as a closed set for metrics and logs (never a name or number)
 */
public record FilterVerdict(List<String> passing, String reason, Code code) {
  public FilterVerdict {
    passing = List.copyOf(passing);
  }

  /** Every answer filter gives. */
  public enum Code {
    ALLOCATED,
    ALLOCATED_ELSEWHERE,
    PENDING,
    NOT_RUNNING,
    JOB_ENDED,
    NOT_SUBMITTED,
    SUBMIT_FAILED,
    POLICY_REJECTED,
    GROUP_INVALID,
    GROUP_INCOMPLETE,
    /** The job runs but holds no node for this member (the group changed shape after it). */
    NO_NODE_FOR_MEMBER,
    /**
     * The pod names a job this replica is still reading: answered as an error, which kube-scheduler
     * retries after its backoff, not as a rejection.
     */
    JOB_NOT_READ_YET;

    /** Whether kube-scheduler is asked to retry rather than told no node fits. */
    public boolean retry() {
      return this == JOB_NOT_READ_YET;
    }

    /** The metric tag and log value: {@code allocated_elsewhere}. */
    public String tag() {
      return name().toLowerCase(Locale.ROOT);
    }
  }
}
