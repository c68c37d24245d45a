package io.kse.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class VerbErrorsTest {
  private static String metrics(int filterErrors, int bindBusy, int ok) {
    return "# HELP kse_filter_duration_seconds\n"
        + "kse_filter_duration_seconds_count{outcome=\"error\",} "
        + filterErrors
        + ".0\n"
        + "kse_filter_duration_seconds_count{outcome=\"ok\",} "
        + ok
        + ".0\n"
        + "kse_bind_duration_seconds_count{outcome=\"busy\",} "
        + bindBusy
        + ".0\n"
        + "kse_bind_duration_seconds_sum{outcome=\"busy\",} 9.0\n"
        + "kse_writer 1.0\n";
  }

  @Test
  void countsErrorsAndBusyAnswersOfEveryVerbButNotTheOkOnes() {
    VerbErrors e = new VerbErrors();
    e.sample("", metrics(0, 0, 500));
    assertThat(e.total()).isZero();
    e.sample("", metrics(2, 1, 900));
    assertThat(e.total()).isEqualTo(3);
  }

  @Test
  void aRestartedReplicasCountsAreAddedToWhatItCountedBefore() {
    VerbErrors e = new VerbErrors();
    e.sample("", metrics(2, 1, 10));
    e.sample("b", metrics(1, 0, 10));
    e.sample("", metrics(0, 0, 3)); // killed and started again
    e.sample("", metrics(1, 0, 8));
    assertThat(e.total()).as("3 before the restart, 1 after, 1 on b").isEqualTo(5);
  }
}
