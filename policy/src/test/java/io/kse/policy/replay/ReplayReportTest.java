package io.kse.policy.replay;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class ReplayReportTest {
  static ReplayReport.Arrival waited(String tier, long seconds) {
    return new ReplayReport.Arrival(tier + seconds, tier, Optional.of(Duration.ofSeconds(seconds)));
  }

  /** Ten inference arrivals waiting 1..10 s, one that never got GPUs; two preemptions. */
  static ReplayReport handMade(String name, int preemptions) {
    List<ReplayReport.Arrival> arrivals = new ArrayList<>();
    for (int s = 1; s <= 10; s++) {
      arrivals.add(waited("inference", s));
    }
    arrivals.add(new ReplayReport.Arrival("never", "inference", Optional.empty()));
    arrivals.add(waited("inference-critical", 2));
    List<ReplayReport.Preemption> pre = new ArrayList<>();
    for (int i = 0; i < preemptions; i++) {
      pre.add(
          new ReplayReport.Preemption(
              "train-" + i, i == 0 ? "training" : "research", 32, Duration.ofMinutes(90)));
    }
    return ReplayReport.of(name, arrivals, pre, Map.of("inference", 1), Duration.ofSeconds(8));
  }

  @Test
  void percentilesAreByNearestRankAndPreemptionsAreGpuHoursOfLostWork() {
    ReplayReport r = handMade("current", 2);
    ReplayReport.TierWaits t = r.tiers().get("inference");
    assertThat(t.arrivals()).isEqualTo(11);
    assertThat(t.allocated()).isEqualTo(10);
    assertThat(t.neverAllocated()).isEqualTo(1);
    // waits 1..10 s: p50 is the 5th, p95 and p99 the 10th
    assertThat(t.p50()).isEqualTo(Duration.ofSeconds(5));
    assertThat(t.p95()).isEqualTo(Duration.ofSeconds(10));
    assertThat(t.p99()).isEqualTo(Duration.ofSeconds(10));
    // over 8 s: 9 and 10, and the one that never got GPUs
    assertThat(t.overThreshold()).isEqualTo(3);
    assertThat(r.preemptions()).isEqualTo(2);
    assertThat(r.preemptionsByPartition())
        .containsExactly(Map.entry("research", 1), Map.entry("training", 1));
    // 2 jobs × 32 GPUs × 1.5 h
    assertThat(r.trainingGpuHoursLost()).isEqualTo(96.0);
  }

  @Test
  void theTableHasAColumnPerPolicy() {
    String table = ReplayReport.table(List.of(handMade("current", 2), handMade("strict", 0)));
    assertThat(table)
        .contains("current")
        .contains("strict")
        .contains("inference p50/p95/p99")
        .contains("5.0s / 10.0s / 10.0s")
        .contains("training GPU-hours lost")
        .contains("96.0");
    assertThat(table.lines().map(String::length).distinct().count())
        .as("aligned columns")
        .isEqualTo(1);
  }

  @Test
  void differencesBeyondTheBaselinesOwnNoiseAreSaidInWords() {
    ReplayReport current = handMade("current", 4);
    ReplayReport again = handMade("current", 3);
    ReplayReport strict = handMade("strict", 1);
    assertThat(ReplayReport.callouts(current, strict, again))
        .contains(
            "strict preempts 3 fewer training jobs than current (1 vs 4; replaying current twice differed by 1)",
            "training loses 144.0 GPU-hours less under strict (48.0 vs 192.0)");
    // within the noise: nothing to say
    assertThat(ReplayReport.callouts(current, handMade("close", 3), handMade("current", 2)))
        .isEmpty();
  }

  @Test
  void arrivalsRefusedOutrightAreARowAndACalloutBeyondTheNoise() {
    List<ReplayReport.Arrival> one =
        List.of(new ReplayReport.Arrival("a", "inference", Optional.of(Duration.ofSeconds(1))));
    Duration t = Duration.ofSeconds(8);
    ReplayReport base = ReplayReport.of("current", one, List.of(), Map.of(), t, 1);
    ReplayReport again = ReplayReport.of("current (again)", one, List.of(), Map.of(), t, 1);
    ReplayReport cand = ReplayReport.of("candidate", one, List.of(), Map.of(), t, 4);

    assertThat(ReplayReport.table(List.of(base, cand, again)))
        .containsPattern("refused outright\\s+1\\s+4\\s+1");
    assertThat(ReplayReport.callouts(base, cand, again))
        .contains(
            "candidate refuses 3 more arrivals outright than current (4 vs 1): see the replay's log"
                + " for why");
    assertThat(ReplayReport.callouts(base, base, again)).isEmpty();
  }

  /** A candidate that lets most pods never run must not read as "waits shorter" alone. */
  @Test
  void aShorterWaitSaysOfHowManyArrivalsThatGotGpus() {
    Duration t = Duration.ofSeconds(8);
    List<ReplayReport.Arrival> all = new ArrayList<>();
    List<ReplayReport.Arrival> few = new ArrayList<>();
    for (int i = 1; i <= 10; i++) {
      all.add(new ReplayReport.Arrival("a" + i, "inference", Optional.of(Duration.ofSeconds(i))));
      few.add(
          new ReplayReport.Arrival(
              "a" + i,
              "inference",
              i <= 2 ? Optional.of(Duration.ofSeconds(i)) : Optional.empty()));
    }
    ReplayReport base = ReplayReport.of("current", all, List.of(), Map.of(), t);
    ReplayReport cand = ReplayReport.of("candidate", few, List.of(), Map.of(), t);

    assertThat(ReplayReport.callouts(base, cand, base))
        .contains(
            "tier inference waits 2.0s at p95 under candidate against 10.0s (shorter; of the"
                + " arrivals that got GPUs: 2 and 10)",
            "8 more inference pods never got GPUs under candidate (8 vs 0)");
  }
}
