package io.kse.extender.filter;

import java.util.List;

/**
 * The answer for one pod: the nodes that pass, and one stable reason for all the others. Rejections
 * are unresolvable: Kubernetes preemption cannot free a node Slurm did not allocate.
 *
 * @param code a short stable code for metrics (never a name or number)
 */
public record FilterVerdict(List<String> passing, String reason, String code) {
  public FilterVerdict {
    passing = List.copyOf(passing);
  }
}
