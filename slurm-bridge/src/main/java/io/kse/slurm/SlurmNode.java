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

  /** Down, failed or draining: not a place for new work. */
  public boolean isUnavailable() {
    return isDraining() || state.equals("down") || state.equals("fail") || flags.contains("FAIL");
  }
}
