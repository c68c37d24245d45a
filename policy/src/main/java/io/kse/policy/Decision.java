package io.kse.policy;

import java.util.List;

/** What the policy decided for a pod, with the record of every rule that contributed. */
public sealed interface Decision {
  String tier();

  List<Contribution> record();

  /** Submit this placeholder job. */
  record Place(String tier, JobSpec job, List<Contribution> record) implements Decision {
    public Place {
      record = List.copyOf(record);
    }
  }

  /** Do not submit anything: the request is impossible or not allowed; {@code reason} says why. */
  record Reject(String tier, String reason, List<Contribution> record) implements Decision {
    public Reject {
      record = List.copyOf(record);
    }
  }
}
