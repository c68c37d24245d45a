package io.kse.policy.cli;

import io.kse.policy.RunningJob;
import io.kse.slurm.JobState;
import io.kse.slurm.SlurmJob;
import io.kse.slurm.rest.SavedJobs;
import java.time.Instant;
import java.util.List;

/**
 * Running jobs from a saved slurmrestd {@code GET /jobs} answer (any version from v0.0.38), for
 * {@code explain}: {@code curl …/slurm/v0.0.38/jobs > jobs.json}. Parsed by the bridge's own
 * reader, so a job's GPUs, nodes and start are counted exactly as the extender counts them.
 */
public final class JobSnapshot {
  private JobSnapshot() {}

  public static List<RunningJob> parse(String json) {
    return SavedJobs.parse(json).stream()
        .filter(j -> j.state() == JobState.RUNNING)
        .map(JobSnapshot::running)
        .toList();
  }

  private static RunningJob running(SlurmJob j) {
    int nodes = Math.max(1, Math.max(j.nodeCount(), j.nodes().size()));
    return new RunningJob(
        j.id(),
        j.name(),
        j.partition(),
        j.qos(),
        (long) j.gpusPerNode() * nodes,
        nodes,
        j.startTime().orElse(Instant.EPOCH));
  }
}
