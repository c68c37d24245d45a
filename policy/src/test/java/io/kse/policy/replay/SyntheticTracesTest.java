package io.kse.policy.replay;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class SyntheticTracesTest {
  @ParameterizedTest
  @ValueSource(longs = {1, 7, 1234})
  void theSameSeedGivesTheSameTraceAndAnotherSeedAnother(long seed) {
    SyntheticTraces.Shape day = SyntheticTraces.Shape.day();
    assertThat(SyntheticTraces.generate(day, seed)).isEqualTo(SyntheticTraces.generate(day, seed));
    assertThat(SyntheticTraces.generate(day, seed))
        .isNotEqualTo(SyntheticTraces.generate(day, seed + 1));
  }

  @ParameterizedTest
  @ValueSource(longs = {1, 7, 1234})
  void inferenceFollowsTheDayAndEverythingLiesWithinTheTrace(long seed) {
    Trace t = SyntheticTraces.generate(SyntheticTraces.Shape.day(), seed);
    // rate 60/h × (1 ± 0.6): about 1,440 a day, far more around noon than around midnight
    assertThat(t.inference()).hasSizeBetween(1_200, 1_700);
    long noon = t.inference().stream().filter(i -> hour(i.at()) >= 9 && hour(i.at()) < 15).count();
    long night = t.inference().stream().filter(i -> hour(i.at()) >= 21 || hour(i.at()) < 3).count();
    assertThat(noon).isGreaterThan(3 * night);
    assertThat(t.slurmJobs()).hasSizeBetween(100, 200);
    assertThat(t.inference())
        .allSatisfy(
            i -> {
              assertThat(i.at()).isLessThan(Duration.ofHours(24));
              assertThat(i.gpus()).isIn(1L, 2L, 4L, 8L);
              assertThat(i.lifetime()).isBetween(Duration.ofMinutes(1), Duration.ofHours(4));
            });
    assertThat(t.slurmJobs())
        .allSatisfy(
            j -> assertThat(j.runtime()).isBetween(Duration.ofMinutes(30), Duration.ofHours(12)));
  }

  static double hour(Duration d) {
    return d.toMillis() / 3_600_000.0;
  }
}
