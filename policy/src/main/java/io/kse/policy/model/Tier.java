package io.kse.policy.model;

import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * A class of workload. Pods are matched to tiers by {@link TierMatch}; Slurm jobs by the tier's
 * partition/QoS.
 *
 * @param match which pods belong here; empty for tiers of Slurm jobs only (e.g. training)
 * @param mayPreempt tiers this tier's placeholders may preempt (all listed after this tier)
 * @param preemptible whether jobs of this tier may be preempted at all
 * @param graceTime how long a preempted job of this tier gets between SIGTERM and the kill
 * @param defaultTopology topology requested when the pod names none
 * @param riskGpuOverlapWithSlurmJobs the SRE declares that this tier's nodes never run Slurm jobs
 *     beside pods, so a pod whose GPUs come from the device plugin may take part of a node; if that
 *     is not true, the device plugin and Slurm can hand one GPU to both (docs/gpu-ownership.md)
 * @param maxNodes the most nodes one placement of this tier may span (default 1): bounds {@code
 *     kse.io/nodes} and group sizes, so a pod owner cannot make one pod hold many nodes
 * @param shareGpus whether this tier's pods may ask part of a GPU (Slurm shards, issue 46)
 */
public record Tier(
    String name,
    Optional<TierMatch> match,
    SlurmSettings slurm,
    List<String> mayPreempt,
    boolean preemptible,
    Duration graceTime,
    TopologyDefault defaultTopology,
    int maxNodes,
    boolean riskGpuOverlapWithSlurmJobs,
    boolean shareGpus) {

  public Tier {
    mayPreempt = List.copyOf(mayPreempt);
  }

  /** Whether this tier's placeholders may make Slurm preempt anything at all. */
  public boolean preempts() {
    return !mayPreempt.isEmpty();
  }

  /** A tier's topology default: none, one NVLink domain, or a number of switches. */
  public enum TopologyDefault {
    NONE,
    NVLINK_DOMAIN
  }
}
