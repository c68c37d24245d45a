package io.kse.slurm.cache;

import io.kse.slurm.PlaceholderOwner;
import io.kse.slurm.SlurmJob;
import io.kse.slurm.SlurmNode;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * What one pass (or one hinted read) learned, applied to a copy of the snapshot's jobs; the cache
 * publishes it whole at the end, even if a later call of the pass failed. Only the jobs of {@code
 * owner} are kept.
 */
final class Pass {
  /** The snapshot this pass goes on from: the one it started from, or its own last publication. */
  Snapshot old;

  final JobsDraft jobs;
  Map<String, SlurmNode> nodes;
  final List<JobChange> changes = new ArrayList<>();
  final List<JobChange> elsewhere = new ArrayList<>();

  /** Read this pass: no longer looked for once published (not before: see the cache's publish). */
  final Set<Long> found = new HashSet<>();

  Instant observed;
  boolean jobsChanged;

  /** The job side was not looked at whole: the snapshot's age stays. */
  boolean keepAsOf;

  private final OurJobs book;
  private final PlaceholderOwner owner;
  private final CacheMeters meters;

  Pass(Snapshot old, OurJobs book, PlaceholderOwner owner, CacheMeters meters, Instant now) {
    this.old = old;
    this.jobs = new JobsDraft(old.jobs());
    this.nodes = old.nodes();
    this.book = book;
    this.owner = owner;
    this.meters = meters;
    this.observed = now;
  }

  PlaceholderOwner owner() {
    return owner;
  }

  /**
   * What this pass learned so far was just published as {@code now} (a pass that published the
   * hints' reads between its own): it goes on from there, and its next publication says only what
   * it learns after.
   */
  void publishedAs(Snapshot now) {
    old = now;
    jobs.rebase(now.jobs());
    changes.clear();
    elsewhere.clear();
    found.clear();
    jobsChanged = false;
  }

  /** What this pass saw is as of {@code at}, unless it saw something later already. */
  void observedAt(Instant at) {
    if (at.isAfter(observed)) {
      observed = at;
    }
  }

  /**
   * Slurm says this of a job, from a read numbered {@code seq} ({@link OurJobs#beginRead}): keep it
   * if it is ours, and note what changed. An answer older than one already applied is dropped.
   */
  void observedJob(SlurmJob j, Instant at, long seq) {
    if (!book.newest(j.id(), seq)) {
      return;
    }
    observedAt(at);
    book.read(j.id(), at);
    book.seen(j.id());
    found.add(j.id());
    if (owner.tagOf(j).isEmpty()) { // a hint or a caller named a job that is not ours
      if (jobs.remove(j.id()) != null) {
        jobsChanged = true;
      }
      if (book.lookingFor(j.id())) {
        book.dismiss(j.id(), at);
      }
      return;
    }
    SlurmJob before = jobs.put(j.id(), j);
    if (before == null || !before.equals(j)) {
      jobsChanged = true;
      changes.add(new JobChange(Optional.ofNullable(before), Optional.of(j), at));
      book.heat(j.id(), at);
      meters.recordLag(j, at);
    }
  }

  /** Slurm did not have the job this time: gone on the second miss in a row. */
  void missed(long id, Instant at) {
    if (!book.secondMiss(id, at)) {
      return;
    }
    if (book.stopLooking(id) && !jobs.containsKey(id)) {
      book.dismiss(id, at); // looked for and never there
    }
    gone(id, at);
  }

  /** The job is no longer Slurm's: forgotten, and its listeners told. */
  void gone(long id, Instant at) {
    book.forget(id);
    SlurmJob before = jobs.remove(id);
    if (before != null) {
      jobsChanged = true;
      changes.add(new JobChange(Optional.of(before), Optional.empty(), at));
    }
  }
}
