package io.kse.policy.drift;

import static org.assertj.core.api.Assertions.assertThat;

import io.kse.policy.PolicyParser;
import io.kse.policy.SlurmRenderer;
import io.kse.policy.model.ClusterSpec;
import io.kse.policy.model.Policy;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class SharesDriftTest {
  private static Policy policy() throws Exception {
    Path p = Path.of("examples/shared-gpus.yaml");
    if (!Files.exists(p)) {
      p = Path.of("policy/examples/shared-gpus.yaml");
    }
    return PolicyParser.parse(Files.readString(p), "shared-gpus.yaml");
  }

  private static TopologyDrift.SlurmSide node(String name, String gres) {
    return new TopologyDrift.SlurmSide(name, Set.of(), gres);
  }

  @Test
  void shardsAsThePolicySaysAreNoDifference() throws Exception {
    ClusterSpec c = policy().cluster();
    assertThat(
            SharesDrift.differences(
                c, List.of(node("a", "gpu:h100:8,shard:32"), node("cpu", "(null)"))))
        .isEmpty();
  }

  @Test
  void otherShardsPerGpuAreNamed() throws Exception {
    assertThat(
            SharesDrift.differences(policy().cluster(), List.of(node("a", "gpu:h100:8,shard:64"))))
        .containsExactly(
            "node a: Slurm's GRES gpu:h100:8,shard:64 gives 8.0 shards per GPU, the policy 4"
                + " (cluster.gpuShares.perGpu)");
  }

  @Test
  void noShardAnywhereIsNamed() throws Exception {
    assertThat(SharesDrift.differences(policy().cluster(), List.of(node("a", "gpu:h100:8"))))
        .singleElement()
        .satisfies(d -> assertThat(d).contains("no Slurm node has it"));
  }

  @Test
  void renderSlurmPrintsTheLinesThatAgree() throws Exception {
    String out = SlurmRenderer.render(policy(), "ALL");
    assertThat(out)
        .contains("GresTypes=gpu,shard")
        .contains("NodeName=... Gres=gpu:h100:8,shard:32")
        .contains("Name=shard Count=32 File=/dev/nvidia[0-7]");
    // and what it prints is what the drift check accepts
    assertThat(
            SharesDrift.differences(policy().cluster(), List.of(node("a", "gpu:h100:8,shard:32"))))
        .isEmpty();
  }
}
