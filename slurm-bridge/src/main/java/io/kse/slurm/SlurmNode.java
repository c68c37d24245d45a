package io.kse.slurm;

import java.util.List;
import java.util.Set;

/**
 * A Slurm node.
 *
 * @param state base state, lower case as Slurm prints it ({@code idle}, {@code mixed}, {@code
 *     allocated}, {@code down}, …)
 * @param flags state flags, upper case ({@code DRAIN}, {@code NOT_RESPONDING}, …)
 * @param reason the admin reason (drain/down), empty when none
 * @param features active features, e.g. the NVLink domain {@code nvl-0}
 */
public record SlurmNode(
    String name,
    String state,
    Set<String> flags,
    String reason,
    Set<String> features,
    String gres,
    String gresUsed,
    int cpus,
    int allocCpus,
    long realMemoryMb,
    List<String> partitions) {

  public SlurmNode {
    flags = Set.copyOf(flags);
    features = Set.copyOf(features);
    partitions = List.copyOf(partitions);
  }

  /** Draining or drained: Slurm schedules nothing new here. */
  public boolean isDraining() {
    return flags.contains("DRAIN");
  }

  /** slurmctld's pings of its slurmd go unanswered (sinfo's {@code *}): Slurm places nothing. */
  public boolean isNotResponding() {
    return flags.contains("NOT_RESPONDING");
  }

  /** Down, failed, draining or not responding: not a place for new work. */
  public boolean isUnavailable() {
    return isDraining()
        || isNotResponding()
        || state.equals("down")
        || state.equals("fail")
        || flags.contains("FAIL");
  }

  /**
   * How the node's unavailability reads as a taint value: its state, and {@code -drain} / {@code
   * -notresponding} when those flags are set (e.g. {@code idle-notresponding}, {@code down}).
   */
  public String unavailableAs() {
    return state + (isDraining() ? "-drain" : "") + (isNotResponding() ? "-notresponding" : "");
  }
}
