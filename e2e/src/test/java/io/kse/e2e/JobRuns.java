package io.kse.e2e;

import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Where and when each job ran, as the soak's checker saw it in squeue once a second: Slurm forgets
 * a requeued job's nodes, the checker does not. A run is one stretch of checks that saw the job
 * running on the same nodes.
 */
final class JobRuns {
  /** Seen running on {@code nodes} from {@code from} to {@code to} (first and last check). */
  record Run(List<String> nodes, Instant from, Instant to) {}

  private final Map<Long, List<Run>> runs = new HashMap<>();
  private Instant lastCheck = Instant.EPOCH;

  /** One check's jobs. */
  synchronized void observe(Instant now, List<SlurmTruth.Job> jobs) {
    for (SlurmTruth.Job j : jobs) {
      if (!j.running() || j.nodes().isEmpty()) {
        continue;
      }
      List<Run> seen = runs.computeIfAbsent(j.id(), k -> new ArrayList<>());
      Run last = seen.isEmpty() ? null : seen.get(seen.size() - 1);
      if (last != null && last.to().equals(lastCheck) && last.nodes().equals(j.nodes())) {
        seen.set(seen.size() - 1, new Run(last.nodes(), last.from(), now));
      } else {
        seen.add(new Run(j.nodes(), now, now));
      }
    }
    lastCheck = now;
  }

  /** Jobs with a run on {@code node} whose last check fell between {@code from} and {@code to}. */
  synchronized java.util.Set<Long> endedOn(String node, Instant from, Instant to) {
    java.util.Set<Long> out = new java.util.HashSet<>();
    runs.forEach(
        (job, list) -> {
          for (Run r : list) {
            if (r.nodes().contains(node) && !r.to().isBefore(from) && !r.to().isAfter(to)) {
              out.add(job);
            }
          }
        });
    return out;
  }

  /** The job's last run that began at or before {@code at}. */
  synchronized Optional<Run> before(long job, Instant at) {
    Run found = null;
    for (Run r : runs.getOrDefault(job, List.of())) {
      if (!r.from().isAfter(at)) {
        found = r;
      }
    }
    return Optional.ofNullable(found);
  }

  /** The job's first run still going at or after {@code at}. */
  synchronized Optional<Run> after(long job, Instant at) {
    return runs.getOrDefault(job, List.of()).stream().filter(r -> !r.to().isBefore(at)).findFirst();
  }
}
