package io.kse.policy.drift;

import static org.assertj.core.api.Assertions.assertThat;

import io.kse.policy.PolicyParser;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class MigDriftTest {
  static io.kse.policy.model.ClusterSpec cluster() throws Exception {
    Path p = Path.of("examples/shared-gpus.yaml");
    return PolicyParser.parse(
            Files.readString(Files.exists(p) ? p : Path.of("policy", p.toString())), "x")
        .cluster();
  }

  @Test
  void aMappedTypeNoNodeHasIsNamedAndOneSomeNodeHasIsNot() throws Exception {
    var nodes =
        List.of(
            new TopologyDrift.SlurmSide("gpu-node-0", Set.of(), "gpu:h100:6,gpu:h100_3g.40gb:4"),
            new TopologyDrift.SlurmSide("gpu-node-1", Set.of(), "gpu:h100:8"));
    assertThat(MigDrift.differences(cluster(), nodes))
        .containsExactly(
            "cluster.migProfiles.1g.10gb names the Slurm GRES type h100_1g.10gb, but no Slurm node"
                + " has GPUs of that type (Gres=gpu:h100_1g.10gb:N; its pods would wait forever)");
    var both =
        List.of(
            new TopologyDrift.SlurmSide(
                "gpu-node-0", Set.of(), "gpu:h100:6,gpu:h100_3g.40gb:4,gpu:h100_1g.10gb:2(S:0)"));
    assertThat(MigDrift.differences(cluster(), both)).isEmpty();
  }
}
