package io.kse.slurm.cache;

import io.kse.slurm.PlaceholderOwner;
import io.kse.slurm.PlaceholderTag;
import io.kse.slurm.SlurmJob;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.LongPredicate;

/**
 * Our placeholders by placement key: the one kept under each key and the live ones beside it
 * (duplicates, to be cancelled), and every one of ours by key. Pure: the rule of which one is kept
 * is here alone. A key's answer depends only on its own jobs, so a snapshot's index is the last one
 * with the keys of the jobs that changed worked out again ({@link #updated}); {@link #of} works out
 * every key.
 *
 * @param ids every job of ours (ended ones too) by key
 */
record PlaceholderIndex(
    Map<String, Long> kept, Map<String, List<Long>> duplicates, Map<String, Set<Long>> ids) {

  static final PlaceholderIndex EMPTY =
      new PlaceholderIndex(ChunkedMap.empty(), ChunkedMap.empty(), ChunkedMap.empty());

  static PlaceholderIndex of(
      Collection<SlurmJob> jobs,
      Map<String, Long> keptBefore,
      PlaceholderOwner owner,
      LongPredicate cancelling) {
    Map<String, Set<Long>> ids = new HashMap<>();
    Map<Long, SlurmJob> byId = new HashMap<>();
    for (SlurmJob j : jobs) {
      owner
          .tagOf(j)
          .ifPresent(
              tag -> {
                ids.computeIfAbsent(tag.key(), k -> new HashSet<>()).add(j.id());
                byId.put(j.id(), j);
              });
    }
    return EMPTY.rework(ids, byId, keptBefore, cancelling);
  }

  /**
   * This index after the jobs {@code changed} names went from {@code before} to {@code after} (put,
   * changed or removed), or were sent a cancel or had one forgotten: only their keys are worked out
   * again. The same as {@link #of} over {@code after} for the same owner.
   */
  PlaceholderIndex updated(
      Map<Long, SlurmJob> before,
      Map<Long, SlurmJob> after,
      Collection<Long> changed,
      PlaceholderOwner owner,
      LongPredicate cancelling) {
    Map<String, Set<Long>> touched = new HashMap<>();
    for (long id : changed) {
      keyOf(before.get(id), owner).ifPresent(k -> touch(touched, k).remove(id));
      keyOf(after.get(id), owner).ifPresent(k -> touch(touched, k).add(id));
    }
    return touched.isEmpty() ? this : rework(touched, after, kept, cancelling);
  }

  private Set<Long> touch(Map<String, Set<Long>> touched, String key) {
    return touched.computeIfAbsent(key, k -> new HashSet<>(ids.getOrDefault(k, Set.of())));
  }

  private static java.util.Optional<String> keyOf(SlurmJob j, PlaceholderOwner owner) {
    return j == null ? java.util.Optional.empty() : owner.tagOf(j).map(PlaceholderTag::key);
  }

  /** These keys, with these jobs each, worked out again over this index. */
  private PlaceholderIndex rework(
      Map<String, Set<Long>> keys,
      Map<Long, SlurmJob> jobs,
      Map<String, Long> keptBefore,
      LongPredicate cancelling) {
    Map<String, Long> keptNow = new HashMap<>();
    Map<String, List<Long>> duplicatesNow = new HashMap<>();
    Map<String, Set<Long>> idsNow = new HashMap<>();
    keys.forEach(
        (key, idSet) -> {
          SlurmJob best = null;
          List<Long> live = new ArrayList<>();
          for (long id : idSet) {
            SlurmJob j = jobs.get(id);
            best = best == null ? j : preferred(best, j, keptBefore.get(key), cancelling);
            if (!j.state().isFinal()) {
              live.add(id);
            }
          }
          keptNow.put(key, best == null ? null : best.id());
          idsNow.put(key, idSet.isEmpty() ? null : Set.copyOf(idSet));
          long keep = best == null ? -1 : best.id();
          duplicatesNow.put(
              key,
              live.size() > 1 ? live.stream().filter(id -> id != keep).sorted().toList() : null);
        });
    return new PlaceholderIndex(
        ChunkedMap.of(kept).with(keptNow),
        ChunkedMap.of(duplicates).with(duplicatesNow),
        ChunkedMap.of(ids).with(idsNow));
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
