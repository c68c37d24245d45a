package io.kse.extender;

import static org.assertj.core.api.Assertions.assertThat;

import io.kse.policy.RunningJob;
import io.kse.policy.load.JobSnapshot;
import io.kse.slurm.JobState;
import io.kse.slurm.SlurmJob;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The policy CLI reads saved slurmrestd job lists itself (policy depends on nothing); the bridge
 * reads live ones. Both must count a job's GPUs the same way — they had drifted apart.
 */
class GpuCountAgreementTest {
  @ParameterizedTest
  @ValueSource(
      strings = {
        "gres:gpu:h100:8",
        "gres:gpu:8",
        "gres/gpu:4",
        "gres/gpu:h100:2",
        "gres:gpu:h100:8,gres:fabric:1",
        "gres:fabric:1",
        ""
      })
  void theCliAndTheBridgeCountTheSameGpus(String tresPerNode) {
    SlurmJob live =
        new SlurmJob(
            1,
            "j",
            "",
            JobState.RUNNING,
            "None",
            "training",
            "",
            List.of("n0"),
            1,
            Instant.EPOCH,
            Optional.of(Instant.EPOCH),
            Optional.empty(),
            0,
            tresPerNode,
            "",
            1,
            Instant.EPOCH);
    String saved =
        "{\"jobs\":[{\"job_id\":1,\"name\":\"j\",\"job_state\":[\"RUNNING\"],\"partition\":\"training\","
            + "\"qos\":\"\",\"node_count\":{\"number\":1},\"start_time\":{\"number\":0},"
            + "\"tres_per_node\":\""
            + tresPerNode
            + "\"}]}";
    List<RunningJob> parsed = JobSnapshot.parse(saved);
    assertThat(parsed).hasSize(1);
    assertThat(parsed.get(0).gpus()).isEqualTo(live.gpusPerNode());
  }
}
