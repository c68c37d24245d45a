package io.kse.e2e;

import io.kse.slurm.GpuIndices;
import io.kse.slurm.GpuShards;
import io.kse.slurm.HostList;
import io.kse.slurm.PlaceholderTag;
import io.kse.slurm.testing.LocalSlurmCluster;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Slurm's own account of its live jobs, read with {@code squeue} and {@code scontrol show job -d}
 * (GPU indices) as root (munge), never through the extender or slurmrestd: what the soak's checker
 * holds the extender's promises against.
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
      Optional<PlaceholderTag> tag,
      Map<String, List<Integer>> gpuIndices,
      Map<String, Map<Integer, Integer>> shards) {
    /** Holds its nodes and runs (CONFIGURING: its prolog runs, the nodes are its already). */
    boolean running() {
      return state.equals("RUNNING") || state.equals("CONFIGURING");
    }

    /** The GPU indices Slurm gave it on {@code node}; empty when Slurm names none. */
    List<Integer> gpusOn(String node) {
      return gpuIndices.getOrDefault(node, List.of());
    }

    /**
     * Its Slurm shards on {@code node}, by GPU index; empty when it has none or Slurm says too
     * little.
     */
    Map<Integer, Integer> shardsOn(String node) {
      return shards.getOrDefault(node, Map.of());
    }

    Job withGpuIndices(Map<String, List<Integer>> indices) {
      return new Job(id, state, nodes, user, gpusPerNode, tag, indices, shards);
    }

    Job withShards(Map<String, Map<Integer, Integer>> byNode) {
      return new Job(id, state, nodes, user, gpusPerNode, tag, gpuIndices, byNode);
    }

    /** Pending, running, suspended or requeued: not on its way out. */
    boolean live() {
      return !state.equals("COMPLETING") && !state.equals("CANCELLED");
    }
  }

  private SlurmTruth() {}

  /**
   * Every job squeue lists now, with the GPU indices of those that hold nodes; empty when slurmctld
   * does not answer (restart, outage).
   */
  static Optional<List<Job>> read(LocalSlurmCluster slurm) {
    String out;
    String detail;
    try {
      out = slurm.cli("squeue", "-h", "-a", "-o", FORMAT);
      detail = slurm.cli("scontrol", "show", "job", "-d");
    } catch (RuntimeException e) {
      return Optional.empty();
    }
    Map<Long, Map<String, List<Integer>>> indices = gpuIndices(detail);
    Map<Long, Map<String, Map<Integer, Integer>>> shards = shards(detail);
    return Optional.of(
        parse(out).stream()
            .map(j -> j.withGpuIndices(indices.getOrDefault(j.id(), Map.of())))
            .map(j -> j.withShards(shards.getOrDefault(j.id(), Map.of())))
            .toList());
  }

  /**
   * Job id → node → GPU indices, from {@code scontrol show job -d}: each job's {@code Nodes=…
   * GRES=gpu:h100:4(IDX:0-3)} lines (one per run of nodes with the same allocation).
   */
  static Map<Long, Map<String, List<Integer>>> gpuIndices(String scontrolDetail) {
    return perNode(scontrolDetail, GpuIndices::parse);
  }

  /**
   * Job id → node → GPU index → this job's shards on it (issue 46), from the same lines: {@code
   * GRES=shard:2(2/4,0/4,…)} on 24.11/26.05, {@code GRES=shard:2(IDX:0)} on 22.05 ({@link
   * GpuShards}).
   */
  static Map<Long, Map<String, Map<Integer, Integer>>> shards(String scontrolDetail) {
    return perNode(scontrolDetail, gres -> GpuShards.parse(gres).map(GpuShards::byGpu));
  }

  /** Each job's per-node GRES lines read by {@code read}, where it finds something. */
  private static <T> Map<Long, Map<String, T>> perNode(
      String scontrolDetail, java.util.function.Function<String, Optional<T>> read) {
    Map<Long, Map<String, T>> out = new HashMap<>();
    long job = -1;
    for (String line : scontrolDetail.split("\n")) {
      Matcher id = JOB_ID.matcher(line);
      if (id.find()) {
        job = Long.parseLong(id.group(1));
        continue;
      }
      Matcher nodes = NODE_GRES.matcher(line);
      if (job >= 0 && nodes.find()) {
        Optional<T> found = read.apply(nodes.group(2).trim());
        if (found.isPresent()) {
          for (String node : HostList.expand(nodes.group(1))) {
            out.computeIfAbsent(job, k -> new HashMap<>()).put(node, found.get());
          }
        }
      }
    }
    return out;
  }

  private static final Pattern JOB_ID = Pattern.compile("^JobId=([0-9]+)\\s");
  private static final Pattern NODE_GRES =
      Pattern.compile("^\\s+Nodes=(\\S+) CPU_IDs=\\S* Mem=\\S+ GRES=(.*)$");

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
              PlaceholderTag.fromComment(f[5].trim()),
              Map.of(),
              Map.of()));
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
