package io.kse.bench.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

class CpuMeterTest {
  /** What settles a run, and what a run's CPU per pod sums: each process once. */
  @Test
  void theStackTotalCountsEachProcessOnceAndLeavesTheLoadGeneratorOut() {
    Map<String, Long> spent =
        Map.of(
            "extender",
            120L,
            "extender.jit",
            40L,
            "extender.gc",
            10L,
            "kube-apiserver",
            80L,
            "slurmd",
            30L,
            CpuMeter.LOAD_GENERATOR,
            500L);
    assertThat(CpuMeter.stackTotal(spent)).isEqualTo(230);
  }
}
