package io.kse.slurm.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.kse.slurm.JobState;
import io.kse.slurm.SlurmClient;
import io.kse.slurm.SlurmClients;
import io.kse.slurm.SlurmJob;
import io.kse.slurm.testing.LocalSlurmCluster;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Accounting mode (MariaDB + slurmdbd, preempt/qos): the QoS tiers the policy targets. QoS {@code
 * inference} may preempt {@code training}; {@code training-protected} is exempt for its first 5
 * minutes (PreemptExemptTime).
 */
// slurmdbd and MariaDB run with the host's Slurm 22.05 only (testing/slurm/slurm-cluster)
@org.junit.jupiter.api.condition.EnabledIf("io.kse.slurm.testing.LocalSlurmCluster#hostSlurm")
class QosPreemptionIT {
  final LocalSlurmCluster cluster = LocalSlurmCluster.shared(LocalSlurmCluster.Mode.ACCOUNTING);
  final SlurmClient slurm = SlurmClients.connect(cluster.config(), new SimpleMeterRegistry());

  @AfterEach
  void clean() {
    cluster.cancelAll();
  }

  @Test
  void anInferenceQosPlaceholderRequeuesATrainingQosJob() {
    cluster.cancelAll();
    List<Long> training = PreemptionScenario.fillWithTraining(cluster, slurm, "--qos=training");
    var r =
        PreemptionScenario.preemptOne(
            slurm,
            training,
            cluster
                .placeholder("llm")
                .partition("inference")
                .qos("inference")
                .exclusive(true)
                .gresPerNode("gpu:h100:8")
                .build());
    assertThat(r.placeholder().qos()).isEqualTo("inference");
    assertThat(r.victim().qos()).isEqualTo("training");
    assertThat(r.victim().restartCount()).isEqualTo(1);
    PreemptionScenario.assertSeenWithinOnePoll(r);
  }

  @Test
  void trainingInsideItsPreemptExemptTimeIsNotPreempted() throws Exception {
    cluster.cancelAll();
    List<Long> training =
        PreemptionScenario.fillWithTraining(cluster, slurm, "--qos=training-protected");
    long id =
        slurm.submit(
            cluster
                .placeholder("llm")
                .partition("inference")
                .qos("inference")
                .exclusive(true)
                .gresPerNode("gpu:h100:8")
                .build());
    // several scheduling passes (sched_interval=2 s): nothing may be preempted
    Thread.sleep(Duration.ofSeconds(5).toMillis());
    SlurmJob p = slurm.job(id).orElseThrow();
    assertThat(p.state()).isEqualTo(JobState.PENDING);
    for (long t : training) {
      SlurmJob j = slurm.job(t).orElseThrow();
      assertThat(j.isAllocated()).as("protected training job %d still running", t).isTrue();
      assertThat(j.restartCount()).isZero();
    }
  }

  @Test
  void anUnknownQosIsRejectedWithSlurmsReason() {
    org.assertj.core.api.Assertions.assertThatThrownBy(
            () -> slurm.submit(cluster.placeholder("x").qos("no-such-qos").build()))
        .isInstanceOf(io.kse.slurm.SlurmRejectedException.class)
        .hasMessageContaining("Invalid qos specification");
  }
}
