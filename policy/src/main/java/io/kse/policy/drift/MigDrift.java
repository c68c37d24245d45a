package io.kse.policy.drift;

import io.kse.policy.model.ClusterSpec;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * Where Slurm lacks the MIG types the policy maps profiles to (issue 46): a pod asking a profile
 * gets a placeholder asking {@code gpu:<type>:N}, which pends forever where no node has that type.
 * Read from each node's configured GRES ({@code gpu:h100:6,gpu:h100_1g.10gb:2}).
 */
public final class MigDrift {
  private MigDrift() {}

  public static List<String> differences(ClusterSpec cluster, List<TopologyDrift.SlurmSide> nodes) {
    List<String> out = new ArrayList<>();
    for (Map.Entry<String, String> e : new TreeMap<>(cluster.migProfiles()).entrySet()) {
      Pattern typed =
          Pattern.compile(
              "(?:^|,)" + Pattern.quote(cluster.gpuGres() + ":" + e.getValue()) + ":\\d+");
      if (nodes.stream().noneMatch(n -> typed.matcher(n.gres()).find())) {
        out.add(
            "cluster.migProfiles."
                + e.getKey()
                + " names the Slurm GRES type "
                + e.getValue()
                + ", but no Slurm node has GPUs of that type (Gres="
                + cluster.gpuGres()
                + ":"
                + e.getValue()
                + ":N; its pods would wait forever)");
      }
    }
    return out;
  }
}
