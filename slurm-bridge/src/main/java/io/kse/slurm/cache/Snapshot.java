package io.kse.slurm.cache;

import io.kse.slurm.SlurmJob;
import io.kse.slurm.SlurmNode;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * One consistent view of Slurm: our placeholders and every node, immutable, swapped in whole at the
 * end of each pass. {@code duplicatesByKey}: live placeholders under a placement key besides the
 * one {@code jobByKey} keeps (a submission that timed out had reached Slurm, and the retry made a
 * second).
 *
 * @param asOf when the job side was last observed whole: the cache's age is measured from it
 */
public record Snapshot(
    Map<Long, SlurmJob> jobs,
    Map<String, Long> jobByKey,
    Map<String, List<Long>> duplicatesByKey,
    Map<String, SlurmNode> nodes,
    Instant asOf) {
  // the empty placement index's maps: the first publication updates it like any other
  static final Snapshot EMPTY =
      new Snapshot(
          ChunkedMap.empty(),
          PlaceholderIndex.EMPTY.kept(),
          PlaceholderIndex.EMPTY.duplicates(),
          Map.of(),
          Instant.EPOCH);

  public Optional<SlurmJob> job(long id) {
    return Optional.ofNullable(jobs.get(id));
  }

  /** The job kept under a placement key: the live one if there is one, else the newest. */
  public Optional<SlurmJob> jobFor(String placementKey) {
    Long id = jobByKey.get(placementKey);
    return id == null ? Optional.empty() : job(id);
  }

  /** Live placeholders under this key besides {@link #jobFor}'s: each one too many. */
  public List<SlurmJob> duplicatesOf(String placementKey) {
    return duplicatesByKey.getOrDefault(placementKey, List.of()).stream()
        .map(jobs::get)
        .filter(Objects::nonNull)
        .toList();
  }

  public Optional<SlurmNode> node(String name) {
    return Optional.ofNullable(nodes.get(name));
  }
}
