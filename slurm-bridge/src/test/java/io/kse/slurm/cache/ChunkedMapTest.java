package io.kse.slurm.cache;

import static org.assertj.core.api.Assertions.assertThat;

import io.kse.slurm.JobState;
import io.kse.slurm.SlurmJob;
import io.kse.slurm.preemption.PreemptionTrackerTest;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The snapshot's maps against a plain HashMap doing the same: contents, and old versions kept. */
class ChunkedMapTest {
  @ParameterizedTest
  @ValueSource(longs = {1, 2, 3, 4, 5, 6})
  void eachVersionHoldsWhatAHashMapWouldAndEarlierOnesStayAsTheyWere(long seed) {
    Random r = new Random(seed);
    Map<Long, String> model = new HashMap<>();
    ChunkedMap<Long, String> map = ChunkedMap.empty();
    List<ChunkedMap<Long, String>> versions = new ArrayList<>();
    List<Map<Long, String>> models = new ArrayList<>();
    for (int step = 0; step < 300; step++) {
      Map<Long, String> changes = new HashMap<>();
      for (int k = r.nextInt(50); k >= 0; k--) {
        long key = r.nextInt(2_000);
        changes.put(key, r.nextInt(4) == 0 ? null : "v" + r.nextInt(1_000));
      }
      changes.forEach(
          (k, v) -> {
            if (v == null) {
              model.remove(k);
            } else {
              model.put(k, v);
            }
          });
      map = map.with(changes);
      assertThat(map).isEqualTo(model);
      assertThat(map.size()).isEqualTo(model.size());
      assertThat(map.entrySet()).hasSize(model.size());
      long probe = r.nextInt(2_000);
      assertThat(map.get(probe)).isEqualTo(model.get(probe));
      assertThat(map.containsKey(probe)).isEqualTo(model.containsKey(probe));
      versions.add(map);
      models.add(Map.copyOf(model));
    }
    for (int i = 0; i < versions.size(); i++) {
      assertThat(versions.get(i)).isEqualTo(models.get(i));
    }
  }

  @ParameterizedTest
  @ValueSource(longs = {1, 2, 3, 4})
  void aDraftReadsAsItsChangesOverItsBaseAndPublishesThem(long seed) {
    Random r = new Random(seed);
    Map<Long, SlurmJob> model = new HashMap<>();
    for (long id = 0; id < 300; id++) {
      model.put(id, job(id, JobState.PENDING));
    }
    JobsDraft draft = new JobsDraft(Map.copyOf(model));
    for (int step = 0; step < 500; step++) {
      long id = r.nextInt(400);
      switch (r.nextInt(3)) {
        case 0 ->
            assertThat(draft.put(id, job(id, JobState.RUNNING)))
                .isEqualTo(model.put(id, job(id, JobState.RUNNING)));
        case 1 -> assertThat(draft.remove(id)).isEqualTo(model.remove(id));
        default -> assertThat(draft.get(id)).isEqualTo(model.get(id));
      }
      assertThat(draft.containsKey(id)).isEqualTo(model.containsKey(id));
      assertThat(draft.size()).isEqualTo(model.size());
      if (step % 100 == 99) {
        assertThat(draft).isEqualTo(model);
        assertThat(List.copyOf(draft.keySet())).containsExactlyInAnyOrderElementsOf(model.keySet());
        ChunkedMap<Long, SlurmJob> published = draft.published();
        assertThat(published).isEqualTo(model);
        draft.rebase(published);
        assertThat(draft.changedIds()).isEmpty();
        assertThat(draft).isEqualTo(model);
      }
    }
  }

  private static SlurmJob job(long id, JobState state) {
    return PreemptionTrackerTest.job(id, true, state, null, null, 0);
  }
}
