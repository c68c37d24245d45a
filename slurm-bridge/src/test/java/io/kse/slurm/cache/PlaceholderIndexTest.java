package io.kse.slurm.cache;

import static org.assertj.core.api.Assertions.assertThat;

import io.kse.slurm.JobState;
import io.kse.slurm.PlaceholderOwner;
import io.kse.slurm.PlaceholderTag;
import io.kse.slurm.SlurmJob;
import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The index a snapshot carries is the last one with the changed jobs' keys worked out again: it
 * must be what working out every key gives, whatever the jobs did in between.
 */
class PlaceholderIndexTest {
  private static final Instant T0 = Instant.parse("2026-11-30T00:00:00Z");
  private static final JobState[] STATES = {
    JobState.PENDING, JobState.RUNNING, JobState.RUNNING, JobState.COMPLETED, JobState.CANCELLED
  };

  @ParameterizedTest
  @ValueSource(longs = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})
  void updatingTheChangedKeysGivesWhatWorkingOutEveryKeyGives(long seed) {
    Random r = new Random(seed);
    Map<Long, SlurmJob> jobs = new HashMap<>();
    Set<Long> cancelling = new HashSet<>();
    PlaceholderOwner owner = PlaceholderOwner.ANYONE;
    PlaceholderIndex index =
        PlaceholderIndex.of(jobs.values(), Map.of(), owner, cancelling::contains);
    long nextId = 1;
    for (int step = 0; step < 400; step++) {
      Map<Long, SlurmJob> before = Map.copyOf(jobs);
      Set<Long> changed = new HashSet<>();
      for (int k = r.nextInt(4); k >= 0; k--) {
        int what = r.nextInt(10);
        List<Long> ids = List.copyOf(jobs.keySet());
        if (what < 4 || ids.isEmpty()) { // a new job under one of a few keys (duplicates happen)
          long id = nextId++;
          jobs.put(id, job(id, "uid-" + r.nextInt(6), STATES[r.nextInt(STATES.length)], r));
          changed.add(id);
        } else if (what < 7) { // a state change
          long id = ids.get(r.nextInt(ids.size()));
          SlurmJob j = jobs.get(id);
          jobs.put(id, job(id, j.placeholder().orElseThrow().uid(), STATES[r.nextInt(5)], r));
          changed.add(id);
        } else if (what < 8) { // purged by Slurm
          long id = ids.get(r.nextInt(ids.size()));
          jobs.remove(id);
          changed.add(id);
        } else { // a cancel sent, or one forgotten
          long id = ids.get(r.nextInt(ids.size()));
          if (!cancelling.remove(id)) {
            cancelling.add(id);
          }
          changed.add(id);
        }
      }
      Map<Long, SlurmJob> after = Map.copyOf(jobs);
      PlaceholderIndex full =
          PlaceholderIndex.of(after.values(), index.kept(), owner, cancelling::contains);
      index = index.updated(before, after, changed, owner, cancelling::contains);
      assertThat(index.kept()).as("seed %d step %d kept", seed, step).isEqualTo(full.kept());
      assertThat(index.duplicates()).as("step %d duplicates", step).isEqualTo(full.duplicates());
      assertThat(index.ids()).as("step %d ids", step).isEqualTo(full.ids());
    }
    assertThat(index.kept()).isNotEmpty();
  }

  @Test
  void aLiveJobIsKeptOverAnEndedOneAndTheOtherLiveOneIsADuplicate() {
    Random r = new Random(0);
    Map<Long, SlurmJob> jobs = new HashMap<>();
    jobs.put(1L, job(1, "u", JobState.COMPLETED, r));
    jobs.put(2L, job(2, "u", JobState.RUNNING, r));
    jobs.put(3L, job(3, "u", JobState.PENDING, r));
    PlaceholderIndex index =
        PlaceholderIndex.of(jobs.values(), Map.of(), PlaceholderOwner.ANYONE, id -> false);
    assertThat(index.kept()).containsEntry("u", 2L);
    assertThat(index.duplicates()).containsEntry("u", List.of(3L));
    assertThat(index.ids()).containsEntry("u", Set.of(1L, 2L, 3L));

    Map<Long, SlurmJob> after = new HashMap<>(jobs);
    after.remove(2L); // purged: the pending one is kept, no duplicate left
    PlaceholderIndex next =
        index.updated(jobs, after, Set.of(2L), PlaceholderOwner.ANYONE, id -> false);
    assertThat(next.kept()).containsEntry("u", 3L);
    assertThat(next.duplicates()).doesNotContainKey("u");
    assertThat(index.kept()).containsEntry("u", 2L); // the old index is unchanged
  }

  private static SlurmJob job(long id, String uid, JobState state, Random r) {
    boolean holds = state == JobState.RUNNING && r.nextBoolean();
    return new SlurmJob(
        id,
        "j" + id,
        new PlaceholderTag("ns", "p-" + uid, uid).toComment(),
        state,
        "None",
        "inference",
        "",
        holds ? List.of("gpu-node-0") : List.of(),
        1,
        T0,
        Optional.empty(),
        Optional.empty(),
        0,
        "gres:gpu:h100:1",
        "",
        1,
        T0);
  }
}
