package io.kse.slurm;

import java.time.Instant;
import java.util.List;

/**
 * The answer to "nodes changed since T", as {@link JobListing} is for jobs: unchanged, or every
 * node. slurmctld answers a node {@code update_time} all-or-nothing too; an idle or steady cluster
 * then costs one small answer a poll instead of its whole node table.
 *
 * @param changed false when nothing changed since the given time; {@code nodes} is then empty
 * @param asOf the time to pass as "since" in the next call
 */
public record NodeListing(boolean changed, List<SlurmNode> nodes, Instant asOf) {
  public NodeListing {
    nodes = List.copyOf(nodes);
  }

  public static NodeListing unchanged(Instant asOf) {
    return new NodeListing(false, List.of(), asOf);
  }
}
