package io.kse.slurm.cache;

import io.kse.slurm.SlurmJob;
import java.util.AbstractMap;
import java.util.AbstractSet;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;

/**
 * A pass's jobs: the snapshot's, and what the pass changed on top of them, kept apart so that the
 * next snapshot is made from the changes alone ({@link #published}) instead of a copy of every job.
 */
final class JobsDraft extends AbstractMap<Long, SlurmJob> {
  private ChunkedMap<Long, SlurmJob> base;
  private final Map<Long, SlurmJob> changes = new HashMap<>(); // a null value: removed

  JobsDraft(Map<Long, SlurmJob> base) {
    this.base = ChunkedMap.of(base);
  }

  /** The jobs as they are now, as the snapshot's next version. */
  ChunkedMap<Long, SlurmJob> published() {
    return base.with(changes);
  }

  /** Every id this draft put or removed since it was made or last {@link #rebase}d. */
  Set<Long> changedIds() {
    return changes.keySet();
  }

  /** Goes on from {@code now} (what this draft held was just published as it). */
  void rebase(Map<Long, SlurmJob> now) {
    base = ChunkedMap.of(now);
    changes.clear();
  }

  @Override
  public SlurmJob get(Object id) {
    return changes.containsKey(id) ? changes.get(id) : base.get(id);
  }

  @Override
  public boolean containsKey(Object id) {
    return get(id) != null;
  }

  @Override
  public SlurmJob put(Long id, SlurmJob job) {
    SlurmJob before = get(id);
    changes.put(id, job);
    return before;
  }

  @Override
  public SlurmJob remove(Object id) {
    SlurmJob before = get(id);
    if (before != null) {
      changes.put((Long) id, null);
    }
    return before;
  }

  @Override
  public int size() {
    int n = base.size();
    for (Map.Entry<Long, SlurmJob> c : changes.entrySet()) {
      boolean inBase = base.containsKey(c.getKey());
      if (c.getValue() == null && inBase) {
        n--;
      } else if (c.getValue() != null && !inBase) {
        n++;
      }
    }
    return n;
  }

  @Override
  public Set<Map.Entry<Long, SlurmJob>> entrySet() {
    return new AbstractSet<>() {
      @Override
      public int size() {
        return JobsDraft.this.size();
      }

      @Override
      public Iterator<Map.Entry<Long, SlurmJob>> iterator() {
        if (changes.isEmpty()) { // a pass's plan reads every job before it changes any
          return base.entrySet().iterator();
        }
        return Stream.concat(
                base.entrySet().stream().filter(e -> !changes.containsKey(e.getKey())),
                changes.entrySet().stream()
                    .filter(e -> e.getValue() != null)
                    .map(e -> Map.entry(e.getKey(), e.getValue())))
            .iterator();
      }
    };
  }
}
