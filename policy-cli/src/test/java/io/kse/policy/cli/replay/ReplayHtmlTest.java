package io.kse.policy.cli.replay;

import static org.assertj.core.api.Assertions.assertThat;

import io.kse.policy.replay.ReplayReport;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class ReplayHtmlTest {
  private static ReplayRun.Outcome run(String name, long inferenceGpus) {
    return new ReplayRun.Outcome(
        name,
        List.of(new ReplayReport.Arrival("serving/a", "inference", Optional.of(Duration.ZERO))),
        List.of(),
        Map.of(),
        List.of(
            new ReplayRun.Sample(Duration.ZERO, 0, 64, 1),
            new ReplayRun.Sample(Duration.ofHours(1), inferenceGpus, 56, 0)),
        List.of(),
        0,
        0);
  }

  @Test
  void aPageHasTheTableEscapedTheCalloutsAndTwoPlotsPerPolicy() {
    String page =
        ReplayHtml.page(
            "replay of <day>",
            "tier a&b  1  2\n",
            List.of("candidate preempts 3 fewer training jobs"),
            List.of("replayed at 60×"),
            List.of(run("base.yaml", 8), run("cand.yaml", 16)),
            64);

    assertThat(page)
        .contains("<title>replay of &lt;day&gt;</title>")
        .contains("tier a&amp;b")
        .contains("<li>candidate preempts 3 fewer training jobs</li>")
        .contains("<h2>base.yaml</h2>", "<h2>cand.yaml</h2>")
        .doesNotContain("<script");
    assertThat(page.split("<svg", -1)).hasSize(5);
  }

  @Test
  void aSampleIsPlacedByItsTimeAndValueWithinThePlot() {
    String page = ReplayHtml.page("t", "", List.of(), List.of(), List.of(run("p.yaml", 32)), 64);

    // the last sample is at the right edge (x = 715); 32 of 64 GPUs is half-way up the plot area
    // (y from 140 at 0 to 10 at the capacity)
    assertThat(page).contains("715.0,75.0");
    assertThat(page).contains("40.0,140.0");
  }
}
