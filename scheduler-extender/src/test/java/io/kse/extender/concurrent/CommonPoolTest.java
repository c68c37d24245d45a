package io.kse.extender.concurrent;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Optional;
import org.junit.jupiter.api.Test;

class CommonPoolTest {
  @Test
  void onOneOrTwoCpusTheCommonPoolGetsTwoWorkersSoTasksDoNotEachStartAThread() {
    assertThat(CommonPool.parallelism(1, Optional.empty())).contains(2);
    assertThat(CommonPool.parallelism(2, Optional.empty())).contains(2);
  }

  @Test
  void withMoreCpusTheJdksOwnChoiceStands() {
    assertThat(CommonPool.parallelism(3, Optional.empty())).isEmpty();
    assertThat(CommonPool.parallelism(64, Optional.empty())).isEmpty();
  }

  @Test
  void anOperatorsChoiceIsNeverOverridden() {
    assertThat(CommonPool.parallelism(2, Optional.of("1"))).isEqualTo(Optional.empty());
  }
}
