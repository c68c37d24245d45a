package io.kse.slurm.cache;

import io.kse.slurm.PlaceholderOwner;
import io.kse.slurm.SlurmJob;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongPredicate;

/**
 * Our placeholders by placement key: the one kept under each key and the live ones beside it
 * (duplicates, to be cancelled). Pure: the rule of which one is kept is here alone.
 */
record PlaceholderIndex(Map<String, Long> kept, Map<String, List<Long>> duplicates) {

  static PlaceholderIndex of(
      Collection<SlurmJob> jobs,
      Map<String, Long> keptBefore,
      PlaceholderOwner owner,
      LongPredicate cancelling) {
    Map<String, SlurmJob> best = new HashMap<>();
    Map<String, List<SlurmJob>> live = new HashMap<>();
    for (SlurmJob j : jobs) {
      owner
          .tagOf(j)
          .ifPresent(
              tag -> {
                best.merge(
                    tag.key(), j, (a, b) -> preferred(a, b, keptBefore.get(tag.key()), cancelling));
                if (!j.state().isFinal()) {
                  live.computeIfAbsent(tag.key(), k -> new ArrayList<>()).add(j);
                }
              });
    }
    Map<String, Long> kept = new HashMap<>();
    best.forEach((key, j) -> kept.put(key, j.id()));
    Map<String, List<Long>> duplicates = new HashMap<>();
    live.forEach(
        (key, js) -> {
          if (js.size() > 1) {
            long keep = kept.get(key);
            duplicates.put(
                key, js.stream().map(SlurmJob::id).filter(id -> id != keep).sorted().toList());
          }
        });
    return new PlaceholderIndex(Map.copyOf(kept), Map.copyOf(duplicates));
  }

  /**
   * A live job beats an ended one; of live ones, one we have not asked Slurm to cancel beats one we
   * have, and one holding nodes beats one still pending (a pod may already be woken for it).
   * Between two alike, the one kept before stays kept: flipping would make the kept one a duplicate
   * to cancel while the other is being cancelled already. Otherwise the newer (higher id) wins.
   */
  private static SlurmJob preferred(
      SlurmJob a, SlurmJob b, Long keptBefore, LongPredicate cancelling) {
    int ra = rank(a, cancelling);
    int rb = rank(b, cancelling);
    if (ra != rb) {
      return ra > rb ? a : b;
    }
    if (keptBefore != null && (a.id() == keptBefore || b.id() == keptBefore)) {
      return a.id() == keptBefore ? a : b;
    }
    return a.id() >= b.id() ? a : b;
  }

  private static int rank(SlurmJob j, LongPredicate cancelling) {
    if (j.state().isFinal()) {
      return 0;
    }
    if (cancelling.test(j.id())) {
      return 1;
    }
    return j.isAllocated() ? 3 : 2;
  }
}
