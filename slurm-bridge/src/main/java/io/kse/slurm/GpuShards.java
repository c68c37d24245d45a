package io.kse.slurm;

import java.util.Collections;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Which GPUs a job's Slurm shards (part of a GPU, issue 46) came from on one node, read out of that
 * node's {@code gres_detail} entry in every form seen live (docs/gpu-sharing.md):
 *
 * <ul>
 *   <li>24.11 and 26.05: {@code shard:2(2/4,0/4,0/4,0/4,0/4,0/4,0/4,0/4)} — for each GPU in index
 *       order, this job's shards on it / the GPU's shards;
 *   <li>22.05: {@code shard:2(IDX:0)} — the GPU indices only; the counts are known only when the
 *       shards came from one GPU (Slurm's default: a job's shards on a node share one GPU).
 * </ul>
 *
 * @param byGpu this job's shards on each GPU index that holds some
 * @param perGpu the shards each GPU has, when the entry says (0: not said)
 */
public record GpuShards(Map<Integer, Integer> byGpu, int perGpu) {
  private static final Pattern COUNTS =
      Pattern.compile("(?:^|,)shard:(\\d+)\\(((?:\\d+/\\d+,?)+)\\)");
  private static final Pattern INDEXES = Pattern.compile("(?:^|,)shard:(\\d+)\\(IDX:([^)]*)\\)");

  public GpuShards {
    byGpu = Collections.unmodifiableMap(new TreeMap<>(byGpu));
  }

  /** The shards of the entry, or empty when it has none or says too little to place them. */
  public static Optional<GpuShards> parse(String entry) {
    String e = entry == null ? "" : entry;
    Matcher m = COUNTS.matcher(e);
    if (m.find()) {
      Map<Integer, Integer> by = new TreeMap<>();
      int per = 0;
      String[] gpus = m.group(2).split(",");
      for (int i = 0; i < gpus.length; i++) {
        String[] f = gpus[i].split("/");
        int mine = Integer.parseInt(f[0]);
        int of = Integer.parseInt(f[1]);
        if (mine > of) {
          return Optional.empty();
        }
        per = Math.max(per, of);
        if (mine > 0) {
          by.put(i, mine);
        }
      }
      int total = Integer.parseInt(m.group(1));
      return by.values().stream().mapToInt(Integer::intValue).sum() == total && total > 0
          ? Optional.of(new GpuShards(by, per))
          : Optional.empty();
    }
    m = INDEXES.matcher(e);
    if (m.find()) {
      Optional<java.util.List<Integer>> idx = GpuIndices.parse("gpu(IDX:" + m.group(2) + ")");
      int total = Integer.parseInt(m.group(1));
      if (idx.isPresent() && idx.get().size() == 1 && total > 0) {
        return Optional.of(new GpuShards(Map.of(idx.get().get(0), total), 0));
      }
    }
    return Optional.empty(); // several GPUs without counts (22.05): how many on each is unknown
  }

  /** The one GPU all shards are on, if they are on one. */
  public Optional<Integer> gpu() {
    return byGpu.size() == 1 ? Optional.of(byGpu.keySet().iterator().next()) : Optional.empty();
  }

  public int total() {
    return byGpu.values().stream().mapToInt(Integer::intValue).sum();
  }
}
