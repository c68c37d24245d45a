package io.kse.slurm.cache;

import java.util.List;

/**
 * What Slurm's hooks say (manifests/slurm/kse-allocation-hint, run as PrologSlurmctld,
 * EpilogSlurmctld and a node trigger): each only a hint to look sooner, never trusted as state.
 */
public interface SlurmHookEvents {
  /** Slurm allocated {@code jobId} (PrologSlurmctld). */
  void allocated(long jobId);

  /** {@code jobId} ended on {@code nodes} (EpilogSlurmctld, every job). */
  void ended(long jobId, List<String> nodes);

  /** These nodes went down, drained or started draining, failed, came up or resumed (strigger). */
  void nodesChanged(List<String> nodes);
}
