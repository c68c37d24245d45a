package io.kse.slurm.cache;

/**
 * A new writer's catching up: slurmctld's whole job table read again (its cache follows the jobs it
 * made, not the previous writer's), and a way to tell when that listing is in the view.
 */
public interface SlurmRelisting {
  /** The whole job table on the next pass. */
  void resyncSoon();

  /** Runs {@code r} once, after the next full listing of the job table has been published. */
  void afterNextListing(Runnable r);

  /** How many listings of the whole job table have begun: a mark for {@link #listedSince}. */
  long listingsBegun();

  /** Whether a listing begun after the mark has been published: every job made before it shows. */
  boolean listedSince(long listingsBegun);
}
