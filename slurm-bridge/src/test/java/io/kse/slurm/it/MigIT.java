package io.kse.slurm.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kse.slurm.JobState;
import io.kse.slurm.SlurmClient;
import io.kse.slurm.SlurmClients;
import io.kse.slurm.SlurmJob;
import io.kse.slurm.testing.LocalSlurmCluster;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * MIG slices as Slurm numbers them (issue 46), on each version: a node with 6 whole GPUs ({@code
 * h100}) and 2 MIG-partitioned ones, each 2 x {@code h100_3g.40gb} and 1 x {@code h100_1g.10gb} on
 * their own device files, in that gres.conf order (testing/slurm/slurm-cluster --mig-gpus 2). A job
 * asking a typed GPU gets {@code gpu:<type>:N(IDX:…)}, which the bridge reads; and the IDX a slice
 * gets is what its DRA device must publish: Slurm numbers the node's GPUs by type, in the order
 * gres.conf first names each type, and by gres.conf line within a type — not by gres.conf line (the
 * 1g slice of the first MIG GPU, the 9th line, is index 10, not 8).
 */
class MigIT {
  static LocalSlurmCluster cluster;
  static SlurmClient slurm;
  static final String NODE = "gpu-node-0";

  @BeforeAll
  static void start() {
    cluster = LocalSlurmCluster.shared(LocalSlurmCluster.Mode.MIG);
    slurm = SlurmClients.connect(cluster.config(), new SimpleMeterRegistry());
  }

  @AfterAll
  static void cancel() {
    cluster.cli("scancel", "--partition", "training");
  }

  long sbatch(String gres) {
    return cluster.sbatchOn("training", NODE, gres);
  }

  Optional<List<Integer>> indices(long id) {
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> slurm.job(id).map(SlurmJob::state).equals(Optional.of(JobState.RUNNING)));
    return slurm.job(id).flatMap(j -> j.gpuIndicesOn(NODE));
  }

  @Test
  void typedMigSlicesAreNumberedByTypeThenByGresConfLine() {
    long big = sbatch("gpu:h100_3g.40gb:1");
    long small = sbatch("gpu:h100_1g.10gb:1");
    long twoBig = sbatch("gpu:h100_3g.40gb:2");
    long whole = sbatch("gpu:h100:2");
    assertThat(indices(big))
        .as("the first 3g.40gb slice: after the 6 whole GPUs")
        .contains(List.of(6));
    assertThat(indices(small))
        .as("the first 1g.10gb slice: after all four 3g.40gb")
        .contains(List.of(10));
    assertThat(indices(twoBig)).contains(List.of(7, 8));
    assertThat(indices(whole)).contains(List.of(0, 1));
    cluster.cli(
        "scancel",
        Long.toString(big),
        Long.toString(small),
        Long.toString(twoBig),
        Long.toString(whole));
  }
}
