package io.kse.slurm;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class SlurmJobTest {
  @ParameterizedTest(name = "tres_per_node \"{0}\" -> {1}")
  @CsvSource({"gres:gpu:h100:8,8", "gres/gpu:4,4", "gres/gpu:a100:2,2", "'',0", "gres:fpga:1,0"})
  void readsGpusPerNodeFromEveryVersionsFormat(String tres, int gpus) {
    SlurmJob j =
        new SlurmJob(
            1,
            "n",
            "",
            JobState.RUNNING,
            "None",
            "p",
            "",
            List.of(),
            1,
            Instant.EPOCH,
            Optional.empty(),
            Optional.empty(),
            0,
            tres,
            "",
            0,
            Instant.EPOCH);
    assertThat(j.gpusPerNode()).isEqualTo(gpus);
  }
}
