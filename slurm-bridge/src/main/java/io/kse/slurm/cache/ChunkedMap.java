package io.kse.slurm.cache;

import java.util.AbstractMap;
import java.util.AbstractSet;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Set;

/**
 * An immutable map whose next version shares what did not change: its entries are spread over
 * {@value #CHUNKS} chunks by hash, and {@link #with} copies only the chunks a change falls in. The
 * cache publishes a snapshot for every hint's read — one job changed among the thousands it keeps
 * (ended placeholders stay until Slurm purges them) — and copying whole maps each time made a
 * burst's work grow with every pod of the last minutes (issue 47).
 */
final class ChunkedMap<K, V> extends AbstractMap<K, V> {
  static final int CHUNKS = 128;

  private static final Map<?, ?>[] NO_CHUNKS = new Map<?, ?>[CHUNKS];

  static {
    Arrays.fill(NO_CHUNKS, Map.of());
  }

  private static final ChunkedMap<?, ?> EMPTY = new ChunkedMap<>(NO_CHUNKS, 0);

  private final Map<?, ?>[] chunks; // never written once the map is made
  private final int size;

  private ChunkedMap(Map<?, ?>[] chunks, int size) {
    this.chunks = chunks;
    this.size = size;
  }

  @SuppressWarnings("unchecked")
  static <K, V> ChunkedMap<K, V> empty() {
    return (ChunkedMap<K, V>) EMPTY;
  }

  /** The map as a chunked one (itself if it is one already). */
  @SuppressWarnings("unchecked")
  static <K, V> ChunkedMap<K, V> of(Map<K, V> m) {
    return m instanceof ChunkedMap<?, ?> c
        ? (ChunkedMap<K, V>) c
        : ChunkedMap.<K, V>empty().with(m);
  }

  /** This map with {@code changes} applied, a null value removing its key; this one unchanged. */
  ChunkedMap<K, V> with(Map<K, V> changes) {
    if (changes.isEmpty()) {
      return this;
    }
    Map<?, ?>[] next = chunks.clone();
    boolean[] copied = new boolean[CHUNKS];
    int n = size;
    for (Map.Entry<K, V> e : changes.entrySet()) {
      int i = chunkOf(e.getKey());
      if (!copied[i]) {
        next[i] = new HashMap<>(next[i]);
        copied[i] = true;
      }
      @SuppressWarnings("unchecked")
      Map<K, V> chunk = (Map<K, V>) next[i];
      boolean had = chunk.containsKey(e.getKey());
      if (e.getValue() == null) {
        if (had) {
          chunk.remove(e.getKey());
          n--;
        }
      } else {
        chunk.put(e.getKey(), e.getValue());
        if (!had) {
          n++;
        }
      }
    }
    return new ChunkedMap<>(next, n);
  }

  private static int chunkOf(Object key) {
    int h = key.hashCode();
    return (h ^ (h >>> 16)) & (CHUNKS - 1);
  }

  @Override
  @SuppressWarnings("unchecked")
  public V get(Object key) {
    return key == null ? null : (V) chunks[chunkOf(key)].get(key);
  }

  @Override
  public boolean containsKey(Object key) {
    return key != null && chunks[chunkOf(key)].containsKey(key);
  }

  @Override
  public int size() {
    return size;
  }

  @Override
  public Set<Map.Entry<K, V>> entrySet() {
    return new AbstractSet<>() {
      @Override
      public int size() {
        return size;
      }

      @Override
      public Iterator<Map.Entry<K, V>> iterator() {
        return new Iterator<>() {
          private int chunk = -1;
          private Iterator<? extends Map.Entry<?, ?>> in = java.util.Collections.emptyIterator();

          @Override
          public boolean hasNext() {
            while (!in.hasNext() && chunk + 1 < CHUNKS) {
              in = chunks[++chunk].entrySet().iterator();
            }
            return in.hasNext();
          }

          @Override
          @SuppressWarnings("unchecked")
          public Map.Entry<K, V> next() {
            if (!hasNext()) {
              throw new NoSuchElementException();
            }
            Map.Entry<?, ?> e = in.next();
            return Map.entry((K) e.getKey(), (V) e.getValue()); // read-only
          }
        };
      }
    };
  }
}
