package io.kse.slurm.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kse.slurm.GpuShards;
import io.kse.slurm.JobState;
import io.kse.slurm.SlurmClient;
import io.kse.slurm.SlurmClients;
import io.kse.slurm.SlurmJob;
import io.kse.slurm.SlurmRelease;
import io.kse.slurm.testing.LocalSlurmCluster;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * What the extender's shared-GPU fence rests on (issue 46), against real Slurm on each version: a
 * GPU another job still holds shards of is given whole to no job — from {@link
 * SlurmRelease#SHARDS_KEPT_APART} on. Before it (22.05 here), once one of two shard jobs on a GPU
 * ends, an 8-GPU job starts on that GPU too (SchedMD bug 19110): the fence must refuse part of a
 * GPU there, and this test fails the day a release it trusts does otherwise.
 */
class ShardsIT {
  static LocalSlurmCluster cluster;
  static SlurmClient slurm;
  static final String NODE = "gpu-node-0";

  @BeforeAll
  static void start() {
    cluster = LocalSlurmCluster.shared(LocalSlurmCluster.Mode.SHARDS);
    slurm = SlurmClients.connect(cluster.config(), new SimpleMeterRegistry());
  }

  @AfterAll
  static void cancel() {
    cluster.cli("scancel", "--partition", "training");
  }

  long sbatch(String gres) {
    return cluster.sbatchOn("training", NODE, gres);
  }

  Optional<JobState> state(long id) {
    return slurm.job(id).map(SlurmJob::state);
  }

  @Test
  void aGpuWhoseShardsAJobStillHoldsIsNeverGivenWholeWhereTheReleaseSaysSo() throws Exception {
    SlurmRelease release = slurm.release().orElseThrow();
    long first = sbatch("shard:1");
    long second = sbatch("shard:1");
    for (long id : new long[] {first, second}) {
      await()
          .atMost(Duration.ofSeconds(30))
          .until(() -> state(id).equals(Optional.of(JobState.RUNNING)));
    }
    Optional<Integer> gpu = slurm.job(first).flatMap(j -> j.shardsOn(NODE)).flatMap(GpuShards::gpu);
    assertThat(gpu).as("the first job's shard is on one GPU").isPresent();
    assertThat(slurm.job(second).flatMap(j -> j.shardsOn(NODE)).flatMap(GpuShards::gpu))
        .as("both shards on one GPU (Slurm packs them)")
        .isEqualTo(gpu);
    cluster.cli("scancel", Long.toString(second)); // root's job: root cancels it
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> state(second).map(s -> s != JobState.RUNNING).orElse(true));
    long whole = sbatch("gpu:8"); // every GPU of the node, the first job's shared one too
    Thread.sleep(8_000); // several scheduling passes
    Optional<JobState> seen = state(whole);
    System.out.printf(
        "[shards] Slurm %s: an 8-GPU job while job %d holds a shard of GPU %d: %s%n",
        release, first, gpu.get(), seen.orElse(null));
    if (release.keepsShardsApart()) {
      assertThat(seen)
          .as("Slurm %s keeps the shared GPU out of a whole allocation", release)
          .contains(JobState.PENDING);
    } else {
      assertThat(seen)
          .as("Slurm %s gives it whole (bug 19110): the fence refuses part of a GPU here", release)
          .contains(JobState.RUNNING);
    }
    cluster.cli("scancel", Long.toString(whole), Long.toString(first));
  }
}
