package io.kse.extender.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;

import io.kse.slurm.JobState;
import io.kse.slurm.SlurmJob;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class PendingAgesTest {
  static final Instant NOW = Instant.parse("2026-11-26T05:00:00Z");

  @Test
  void onlyJobsSlurmHasPendingCountAndEachTierGetsItsOldest() {
    Map<Long, JobState> slurm =
        Map.of(
            1L, JobState.PENDING, 2L, JobState.PENDING, 3L, JobState.RUNNING, 4L, JobState.PENDING);
    List<PlaceholderState> states =
        List.of(
            new PlaceholderState.Submitted(1, "inference", NOW.minusSeconds(30)),
            new PlaceholderState.Submitted(2, "inference", NOW.minusSeconds(600)),
            // running: allocated, not waiting, however old
            new PlaceholderState.Submitted(3, "inference", NOW.minusSeconds(9_000)),
            new PlaceholderState.Submitted(4, "batch", NOW.minusSeconds(5)),
            // not in the cache yet (or gone): not a wait
            new PlaceholderState.Submitted(5, "batch", NOW.minusSeconds(9_000)),
            new PlaceholderState.Submitting(NOW.minusSeconds(9_000)),
            new PlaceholderState.Rejected("no tier"));
    Map<String, Double> ages =
        PendingAges.oldestByTier(
            states, id -> Optional.ofNullable(slurm.get(id)).map(s -> job(id, s)), NOW);
    assertThat(ages).containsExactly(Map.entry("batch", 5.0), Map.entry("inference", 600.0));
  }

  @Test
  void nothingPendingIsNoSeriesAtAll() {
    assertThat(PendingAges.oldestByTier(List.of(), id -> Optional.empty(), NOW)).isEmpty();
  }

  static SlurmJob job(long id, JobState state) {
    return new SlurmJob(
        id,
        "kse-x",
        "",
        state,
        "None",
        "inference",
        "",
        List.of(),
        1,
        NOW,
        Optional.empty(),
        Optional.empty(),
        0,
        "gres:gpu:1",
        "",
        0,
        NOW,
        Optional.empty(),
        List.of(),
        "kse",
        Optional.empty());
  }
}
