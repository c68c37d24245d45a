package io.kse.slurm.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.kse.slurm.JobState;
import io.kse.slurm.SlurmClient;
import io.kse.slurm.SlurmClients;
import io.kse.slurm.testing.LocalSlurmCluster;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** preempt/partition_prio: the inference partition's higher PriorityTier requeues training. */
class PartitionPreemptionIT {
  final LocalSlurmCluster cluster = LocalSlurmCluster.shared(LocalSlurmCluster.Mode.PARTITION);
  final SlurmClient slurm = SlurmClients.connect(cluster.config(), new SimpleMeterRegistry());

  @AfterEach
  void clean() {
    cluster.cancelAll();
  }

  @Test
  void anInferencePlaceholderRequeuesATrainingJobAndTheCacheSeesBothWithinOnePoll() {
    cluster.cancelAll();
    List<Long> training = PreemptionScenario.fillWithTraining(cluster, slurm);
    var r =
        PreemptionScenario.preemptOne(
            slurm,
            training,
            cluster
                .placeholder("llm")
                .partition("inference")
                .exclusive(true)
                .gresPerNode("gpu:h100:8")
                .build());
    assertThat(r.placeholder().isAllocated()).isTrue();
    assertThat(r.victim().state()).isEqualTo(JobState.PENDING);
    assertThat(r.victim().restartCount()).isEqualTo(1);
    // requeued jobs wait out a BeginTime; 26.05 may show None for a moment after the requeue (CI)
    assertThat(r.victim().stateReason()).isIn("BeginTime", "None");
    PreemptionScenario.assertSeenWithinOnePoll(r);
  }
}
