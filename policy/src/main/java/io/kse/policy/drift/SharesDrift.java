package io.kse.policy.drift;

import io.kse.policy.model.ClusterSpec;
import io.kse.policy.model.GpuShares;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Where Slurm's shards disagree with the policy's shares per GPU (issue 46): a pod asking K shares
 * gets K shards, so a GPU must have as many shards in Slurm as the policy (and the DRA driver) say
 * it has shares. Read from each node's configured GRES ({@code gpu:h100:8,shard:32}).
 */
public final class SharesDrift {
  private static final Pattern COUNT = Pattern.compile("(?:^|,)%s(?::[^:,(]+)*:(\\d+)");

  private SharesDrift() {}

  public static List<String> differences(ClusterSpec cluster, List<TopologyDrift.SlurmSide> nodes) {
    List<String> out = new ArrayList<>();
    if (cluster.gpuShares().isEmpty()) {
      return out;
    }
    GpuShares s = cluster.gpuShares().get();
    int withShards = 0;
    for (TopologyDrift.SlurmSide n : nodes) {
      long gpus = count(n.gres(), cluster.gpuGres());
      long shards = count(n.gres(), s.gres());
      if (shards == 0) {
        continue;
      }
      withShards++;
      if (gpus == 0 || shards != gpus * s.perGpu()) {
        out.add(
            "node "
                + n.name()
                + ": Slurm's GRES "
                + n.gres()
                + " gives "
                + (gpus == 0 ? "no GPU" : shards / (double) gpus + " " + s.gres() + "s per GPU")
                + ", the policy "
                + s.perGpu()
                + " (cluster.gpuShares.perGpu)");
      }
    }
    if (withShards == 0) {
      out.add(
          "cluster.gpuShares names the GRES "
              + s.gres()
              + ", but no Slurm node has it (GresTypes and the nodes' Gres=…,"
              + s.gres()
              + ":N; kse-policy render-slurm prints them)");
    }
    return out;
  }

  private static long count(String gres, String name) {
    Matcher m = Pattern.compile(String.format(COUNT.pattern(), Pattern.quote(name))).matcher(gres);
    long n = 0;
    while (m.find()) {
      n += Long.parseLong(m.group(1));
    }
    return n;
  }
}
