package io.kse.slurm.cache;

/**
 * A new writer's catching up: the jobs made since its cache last listed slurmctld's table (its
 * cache follows the jobs it made, not the previous writer's), and a way to tell when they are in
 * the view.
 */
public interface SlurmRelisting {
  /** The whole job table on the next pass. */
  void resyncSoon();

  /**
   * The jobs made since the last listing, on the next pass: found by difference where slurmrestd
   * can say every job's state in one small answer (v0.0.41+), else by listing the whole table.
   * Either counts as a listing for {@link #afterNextListing} and {@link #listedSince}.
   */
  void catchUpSoon();

  /** Runs {@code r} once, after the next full listing of the job table has been published. */
  void afterNextListing(Runnable r);

  /** How many listings of the whole job table have begun: a mark for {@link #listedSince}. */
  long listingsBegun();

  /** Whether a listing begun after the mark has been published: every job made before it shows. */
  boolean listedSince(long listingsBegun);
}
