package io.kse.e2e;

import io.kse.slurm.HostList;
import io.kse.slurm.PlaceholderTag;
import io.kse.slurm.testing.LocalSlurmCluster;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Slurm's own account of its live jobs, read with {@code squeue} as root (munge), never through the
 * extender or slurmrestd: what the soak's checker holds the extender's promises against.
 */
final class SlurmTruth {
  private static final String FORMAT = "%i|%T|%N|%u|%b|%k";

  /** One live job as squeue shows it. */
  record Job(
      long id,
      String state,
      List<String> nodes,
      String user,
      int gpusPerNode,
      Optional<PlaceholderTag> tag) {
    boolean running() {
      return state.equals("RUNNING");
    }

    /** Pending, running, suspended or requeued: not on its way out. */
    boolean live() {
      return !state.equals("COMPLETING") && !state.equals("CANCELLED");
    }
  }

  private SlurmTruth() {}

  /** Every job squeue lists now; empty when slurmctld does not answer (restart, outage). */
  static Optional<List<Job>> read(LocalSlurmCluster slurm) {
    String out;
    try {
      out = slurm.cli("squeue", "-h", "-a", "-o", FORMAT);
    } catch (RuntimeException e) {
      return Optional.empty();
    }
    return Optional.of(parse(out));
  }

  static List<Job> parse(String squeue) {
    List<Job> jobs = new ArrayList<>();
    for (String line : squeue.split("\n")) {
      if (line.isBlank()) {
        continue;
      }
      String[] f = line.split("\\|", 6);
      if (f.length < 6 || !f[0].matches("[0-9]+")) {
        continue; // an array's pending range ("12_[1-4]") and the like: never one of ours
      }
      List<String> nodes =
          f[2].isBlank() || f[2].startsWith("(") ? List.of() : HostList.expand(f[2].trim());
      jobs.add(
          new Job(
              Long.parseLong(f[0]),
              f[1].trim(),
              nodes,
              f[3].trim(),
              gpus(f[4]),
              PlaceholderTag.fromComment(f[5].trim())));
    }
    return jobs;
  }

  /**
   * The GPU count of a per-node GRES request ({@code gres/gpu:h100:8}, {@code gpu:8}); 0 if none.
   */
  static int gpus(String tresPerNode) {
    for (String part : tresPerNode.split(",")) {
      if (part.contains("gpu")) {
        String[] bits = part.trim().split(":");
        String last = bits[bits.length - 1];
        if (last.matches("[0-9]+")) {
          return Integer.parseInt(last);
        }
        return 1;
      }
    }
    return 0;
  }
}
