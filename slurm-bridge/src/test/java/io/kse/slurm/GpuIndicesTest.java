package io.kse.slurm;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class GpuIndicesTest {
  @ParameterizedTest(name = "\"{0}\" -> {1}")
  @CsvSource(
      delimiter = '|',
      value = {
        "gpu:h100:4(IDX:0-3)|0 1 2 3",
        "gpu:4(IDX:0,5)|0 5",
        "gpu:h100:2(IDX:2,5-6)|2 5 6",
        "gpu:a100:1(IDX:0),gpu:h100:1(IDX:4)|0 4",
        "gpu:h100(CNT:2)(IDX:6-7)|6 7",
        "fpga:1(IDX:0),gpu:h100:1(IDX:3)|3",
        "gpu:h100:4(IDX:N/A)|",
        "gpu:h100:4|",
        "fpga:1(IDX:0)|",
        "gpu:h100:1(IDX:x)|",
        "''|",
      })
  void readsTheIndicesOfEveryVersionsGresDetail(String entry, String expected) {
    Optional<List<Integer>> want =
        expected == null
            ? Optional.empty()
            : Optional.of(Arrays.stream(expected.split(" ")).map(Integer::valueOf).toList());
    assertThat(GpuIndices.parse(entry)).isEqualTo(want);
  }
}
