package io.kse.slurm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class HostListTest {
  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = ';',
      value = {
        "gpu-node-0;gpu-node-0",
        "gpu-node-[0-2];gpu-node-0,gpu-node-1,gpu-node-2",
        "gpu-node-[1,3-4],cpu-1;gpu-node-1,gpu-node-3,gpu-node-4,cpu-1",
        "n[08-10];n08,n09,n10",
        "rack[1-2]-n[1-2];rack1-n1,rack1-n2,rack2-n1,rack2-n2",
      })
  void expands(String expression, String expected) {
    assertThat(String.join(",", HostList.expand(expression))).isEqualTo(expected);
  }

  @Test
  void emptyAndNullMeanNoNodes() {
    assertThat(HostList.expand("")).isEmpty();
    assertThat(HostList.expand(null)).isEmpty();
    assertThat(HostList.expand("(null)")).isEmpty();
  }

  @Test
  void rejectsUnbalancedBrackets() {
    assertThatThrownBy(() -> HostList.expand("n[1-2")).hasMessageContaining("unbalanced");
  }
}
