package io.kse.slurm.cache;

import io.kse.slurm.PlaceholderOwner;
import io.kse.slurm.PlaceholderTag;
import io.kse.slurm.SlurmClient;
import io.kse.slurm.SlurmException;
import io.kse.slurm.SlurmJob;
import io.kse.slurm.SlurmNode;
import io.kse.slurm.StateCadence;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Our placeholder jobs and Slurm's nodes in memory ({@link SlurmView}), so that kube-scheduler
 * requests are answered without calling Slurm; readers see an immutable {@link Snapshot} swapped in
 * at the end of each pass. This class runs the pass and composes its parts (docs/architecture.md,
 * "The Slurm state cache"):
 *
 * <ul>
 *   <li>{@link PassPlan}: what a pass asks Slurm — pure, decided from the next three;
 *   <li>{@link OurJobs}: our jobs' bookkeeping (looked for, read and check times, misses, cancels);
 *   <li>{@link JobTable}: slurmctld's whole job table, at start, takeover and as the safety net;
 *   <li>{@link NodeTable}: the node table and the nodes triggers name;
 *   <li>{@link EndHints}: other users' ended jobs our placeholders may have preempted;
 *   <li>{@link PassReads}: the calls a pass makes for our jobs;
 *   <li>{@link Pass}, {@link PlaceholderIndex}: what a pass learned, and the kept job per key;
 *   <li>{@link Poller}, {@link CacheMeters}, {@link CacheListeners}: the thread, meters, listeners.
 * </ul>
 *
 * <p>What it costs slurmctld grows with our own jobs ({@link StateCadence}). A job missing once is
 * not reported gone: slurmctld restarting, or an answer racing a purge, must not look like "the job
 * ended"; a second miss, from any check, confirms removal. Passes, hinted reads' merges and node
 * reads hold one lock; the Slurm call of a hinted job read does not, so hints never delay a pass.
 */
public final class SlurmStateCache implements SlurmView, SlurmRelisting, AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(SlurmStateCache.class);

  private final StateCadence cadence;
  private final Clock clock;
  private final OurJobs book = new OurJobs();
  private final JobTable jobTable;
  private final NodeTable nodeTable;
  private final EndHints endHints;
  private final CacheMeters meters;
  private final Poller poller = new Poller(this::pollQuietly);
  private final CacheListeners listeners = new CacheListeners();
  private final PassReads reads;

  /** One pass (or a hint's or a node event's publication) at a time. */
  private final ReentrantLock passLock = new ReentrantLock();

  private final HintedReads hintedReads = new HintedReads();

  private volatile Snapshot snapshot = Snapshot.EMPTY;
  private volatile Instant lastSuccess = Instant.EPOCH;
  private volatile Optional<SlurmException> lastError = Optional.empty();
  // the published snapshot's placement index (this method alone publishes), and whose jobs it
  // counted ours (under the pass lock)
  private PlaceholderIndex index = PlaceholderIndex.EMPTY;
  private PlaceholderOwner indexOwner = PlaceholderOwner.ANYONE;
  private volatile PlaceholderOwner owner = PlaceholderOwner.ANYONE;

  public SlurmStateCache(
      SlurmClient client, StateCadence cadence, Clock clock, MeterRegistry registry) {
    this.cadence = cadence;
    this.clock = clock;
    this.jobTable = new JobTable(client, cadence.safetyNet(), clock);
    this.nodeTable = new NodeTable(client, cadence.nodes());
    this.endHints = new EndHints(client, clock);
    this.reads = new PassReads(client, cadence, clock, book, nodeTable);
    this.meters =
        new CacheMeters(registry, this::age, () -> snapshot.jobs().size(), jobTable::impostors);
  }

  /** A cache that looks at everything every pass (tests, tools): {@link StateCadence#everyPass}. */
  public SlurmStateCache(
      SlurmClient client,
      Duration pollInterval,
      Duration resyncInterval,
      Clock clock,
      MeterRegistry registry) {
    this(client, StateCadence.everyPass(pollInterval, resyncInterval), clock, registry);
  }

  // ---- life and listeners

  /** Starts polling in the background; the first pass (with the full listing) runs at once. */
  public void start() {
    poller.start(cadence.poll());
  }

  @Override
  public void close() {
    poller.close();
  }

  /** Told of each job change, on the thread that published it, in observation order. */
  public void addJobListener(java.util.function.Consumer<JobChange> l) {
    listeners.add(l::accept);
  }

  /** Told of each node that changed (any field): before, after. */
  public void addNodeListener(
      java.util.function.BiConsumer<Optional<SlurmNode>, Optional<SlurmNode>> l) {
    listeners.add(l::accept);
  }

  /**
   * Whose placeholders this cache serves: another Kubernetes cluster's and impostors (our tag,
   * another Slurm user) are never found by {@link #jobFor}, so nothing acts on them.
   */
  public void owner(PlaceholderOwner owner) {
    passLock.lock();
    try {
      this.owner = owner;
      jobTable.requestListing(); // what is ours may have changed: the whole table on the next pass
    } finally {
      passLock.unlock();
    }
  }

  /**
   * Told after each listing of the job table is published (and what waited on it has run), on the
   * pass's thread, with how many jobs it read: everyone's, most of them streamed past and dropped.
   */
  public void addListingListener(java.util.function.IntConsumer l) {
    listeners.add(l::accept);
  }

  // ---- the view

  @Override
  public Snapshot snapshot() {
    return snapshot;
  }

  @Override
  public boolean synced() {
    return jobTable.synced() && nodeTable.synced();
  }

  @Override
  public Duration age() {
    return Duration.between(lastSuccess, clock.instant());
  }

  @Override
  public Optional<SlurmException> lastError() {
    return lastError;
  }

  @Override
  public Optional<PlaceholderTag> ours(SlurmJob job) {
    return owner.tagOf(job);
  }

  @Override
  public Instant confirmedAt(long jobId) {
    return book.confirmed(jobId);
  }

  @Override
  public boolean knows(long jobId) {
    return snapshot.jobs().containsKey(jobId) || book.lookingFor(jobId);
  }

  @Override
  public boolean lookingFor(long jobId) {
    return book.lookingFor(jobId) && !snapshot.jobs().containsKey(jobId);
  }

  /** A name read lately and found not ours, or twice not there: not looked for again for now. */
  public boolean dismissed(long jobId) {
    return book.dismissed(jobId, clock.instant());
  }

  @Override
  public boolean worthLookingFor(long jobId) {
    return !knows(jobId) && !dismissed(jobId);
  }

  @Override
  public long listingsBegun() {
    return jobTable.begun();
  }

  @Override
  public boolean listedSince(long listingsBegun) {
    return jobTable.listedSince(listingsBegun);
  }

  /** Live jobs that carry our tag under another Slurm user, at the last full listing. */
  public int impostors() {
    return jobTable.impostors();
  }

  // ---- what tells the cache to look

  /**
   * We just submitted or changed this job: checked every pass until seen, and for a while after.
   */
  public void track(long jobId) {
    book.madeOrChanged(jobId, snapshot.jobs().containsKey(jobId), clock.instant());
  }

  /** Slurm's allocation hook named this job: looked for, and the hooks count as delivering. */
  public void allocationHinted(long jobId) {
    Instant now = clock.instant();
    book.allocationHinted(now);
    book.hinted(jobId, snapshot.jobs().containsKey(jobId), now);
  }

  /** Slurm's end hook named another user's job that ran on {@code nodes} ({@link EndHints}). */
  public void endedElsewhere(long jobId, List<String> nodes) {
    Instant now = clock.instant();
    endHints.ended(
        jobId,
        nodes,
        EndHints.mayBePreemptedForUs(snapshot.jobs().values(), book.anyLookedFor(), now));
  }

  /** The whole job table on the next pass: when in doubt. */
  @Override
  public void resyncSoon() {
    jobTable.requestListing();
  }

  /** The jobs made since the last listing, on the next pass: a takeover ({@link JobTable}). */
  @Override
  public void catchUpSoon() {
    jobTable.requestCatchUp();
  }

  /** Runs {@code r} once, after the next full listing of the job table has been published. */
  @Override
  public void afterNextListing(Runnable r) {
    jobTable.afterNextListing(r);
  }

  /** One more pass soon ({@link Poller#soon}); before the first listing, nothing (it reads all). */
  public void pollSoon(Duration minGap) {
    if (jobTable.synced()) {
      poller.soon(minGap);
    }
  }

  /**
   * {@code client}, telling this cache of every job submitted, changed or cancelled through it. A
   * submission that got no answer may have made a job all the same: the next listing finds it, so
   * its retry's twin is found and cancelled. A job we asked to cancel is never the one kept of two.
   */
  public SlurmClient tracking(SlurmClient client) {
    return new TrackedSlurmClient(
        client,
        this::track,
        () -> jobTable.lostAnswer(clock.instant()),
        id -> book.cancelling(id, clock.instant()));
  }

  // ---- passes and reads

  /**
   * One pass, synchronously (the poller calls this too): the job table if due, the checks and reads
   * {@link PassPlan} says, other users' ended jobs, the node table if due. Whatever it learned
   * before a call failed is published.
   */
  public void pollOnce() {
    passLock.lock();
    try {
      pollLocked();
    } finally {
      passLock.unlock();
      publishHintedReads(); // any a hint read after this pass published
    }
  }

  private void pollLocked() {
    long start = System.nanoTime();
    Instant now = clock.instant();
    Pass pass = new Pass(snapshot, book, owner, meters, now);
    long listing = 0;
    List<Runnable> waiting = List.of();
    boolean nodesListed = false;
    try {
      if (jobTable.due(now)) {
        waiting = jobTable.waiting();
        listing = jobTable.list(pass, book, now);
      }
      reads.checkOurs(pass, now, () -> publishHintedReadsWithin(pass));
      reads.nodesStartedOn(pass);
      pass.elsewhere.addAll(endHints.read(pass.owner(), cadence.maxReadsPerPoll(), now));
      if (nodeTable.due(now)) {
        nodeTable.list(now).ifPresent(n -> pass.nodes = n);
        nodesListed = true;
      }
      lastSuccess = pass.observed;
      lastError = Optional.empty();
    } catch (SlurmException e) {
      if (lastError.isEmpty()) {
        LOG.warn("slurm_poll_failed error={} cacheAgeMs={}", e.getMessage(), age().toMillis());
      }
      lastError = Optional.of(e);
      throw e;
    } finally {
      hintedReads.applyTo(pass); // reads a hint made while this pass ran: published with it
      publish(pass);
      if (nodesListed) {
        nodeTable.published();
      }
      List<Runnable> due = List.of();
      if (listing > 0) {
        meters.tableRead(jobTable.lastCaughtUp());
        jobTable.published(listing, waiting);
        due = waiting;
      }
      poller.passEnded();
      meters.recordPass(Duration.ofNanos(System.nanoTime() - start));
      for (Runnable r : due) {
        try {
          r.run();
        } catch (RuntimeException e) {
          LOG.error("slurm_after_listing_failed", e);
        }
      }
      if (listing > 0) { // a catch-up streamed every job's state: garbage as the table grows
        listeners.listing(jobTable.tableSize());
      }
    }
  }

  /**
   * Reads one job now, outside the pass (a hint named it), publishes what Slurm says of it, and
   * returns it (empty if Slurm does not have it, or before the first listing). The call never waits
   * for a pass: a slow or failing slurmrestd answer for one name never delays a pass, and a pass
   * under way (seconds, in a burst) never holds up the hints — it publishes the read with its own
   * at its end. An answer older than a pass's read of the same job is dropped. A job that is not
   * ours is not kept; a job Slurm does not have (or refuses to read) is left to the passes, which
   * dismiss it.
   */
  public Optional<SlurmJob> refreshJob(long jobId) {
    if (!jobTable.synced()) {
      // the first listing reads every job, and runs only once the owner is set: publishing a
      // change earlier would hand listeners a job before they can tell whose it is
      return Optional.empty();
    }
    long seq = book.beginRead();
    Optional<SlurmJob> now = reads.job(jobId);
    if (now.isEmpty()) {
      return now;
    }
    hintedReads.add(now.get(), clock.instant(), seq);
    publishHintedReads();
    return now;
  }

  /**
   * Publishes the hints' reads unless a pass (or another hint's publication) is under way: that one
   * publishes them, or calls this again once it lets go — no read waits for the next pass.
   */
  private void publishHintedReads() {
    while (hintedReads.waiting() && passLock.tryLock()) {
      try {
        Pass pass = new Pass(snapshot, book, owner, meters, clock.instant());
        hintedReads.applyTo(pass);
        pass.keepAsOf = true; // the rest of the snapshot is as old as before
        publish(pass);
      } finally {
        passLock.unlock();
      }
    }
  }

  /**
   * The pass under way publishes the hints' reads between its own, with what it learned so far, and
   * goes on from there: in a burst on 22.05 a pass reads tens of new jobs one by one (a second on 2
   * busy cores), and 52 of a 64-pod burst's placeholders, read by their hints as they started, were
   * published together at its end, 1.4 s after Slurm had started them (issue 47).
   */
  private void publishHintedReadsWithin(Pass pass) {
    if (!hintedReads.waiting()) {
      return;
    }
    hintedReads.applyTo(pass);
    boolean keepAsOf = pass.keepAsOf;
    pass.keepAsOf = true; // the pass has not looked at everything yet: the snapshot's age stays
    publish(pass);
    pass.keepAsOf = keepAsOf;
    pass.publishedAs(snapshot);
  }

  /**
   * Slurm's node trigger named these nodes, or we just drained or resumed one: each is read now and
   * the node listeners told, instead of waiting for the node table ({@link NodeTable#read}).
   */
  public void refreshNodes(Collection<String> names) {
    passLock.lock();
    try {
      if (!nodeTable.synced()) {
        return; // the first listing reads every node
      }
      Pass pass = new Pass(snapshot, book, owner, meters, clock.instant());
      pass.nodes = nodeTable.read(names, snapshot.nodes());
      pass.keepAsOf = true; // the job side is as old as before
      publish(pass);
    } finally {
      passLock.unlock();
    }
  }

  /** Swaps in what the pass learned, then tells the listeners. */
  private void publish(Pass pass) {
    Snapshot old = pass.old;
    Map<Long, SlurmJob> jobs = pass.jobsChanged ? pass.jobs.published() : old.jobs();
    Set<Long> redo = new HashSet<>(book.takeCancelsChanged());
    if (pass.jobsChanged) {
      redo.addAll(pass.jobs.changedIds());
      redo.addAll(book.forgetCancels(jobs, clock.instant()));
    }
    if (!pass.owner().equals(indexOwner)) { // whose jobs are ours changed: every key again
      index = PlaceholderIndex.of(jobs.values(), old.jobByKey(), pass.owner(), book::isCancelling);
      indexOwner = pass.owner();
    } else if (!redo.isEmpty()) {
      index = index.updated(old.jobs(), jobs, redo, pass.owner(), book::isCancelling);
    }
    snapshot =
        new Snapshot(
            jobs,
            index.kept(),
            index.duplicates(),
            pass.nodes,
            pass.keepAsOf ? old.asOf() : pass.observed);
    // looked for until now: in between, a job would be in neither the snapshot nor the looked-for
    // set, and an end hook arriving then must still find it known
    book.found(pass.found);
    pass.changes.forEach(listeners::job);
    pass.elsewhere.forEach(listeners::job);
    listeners.nodes(old.nodes(), snapshot.nodes());
  }

  private void pollQuietly() {
    try {
      pollOnce();
    } catch (SlurmException e) {
      // pollOnce kept it and logged the first of a run
    } catch (RuntimeException e) {
      LOG.error("slurm_poll_crashed", e);
    }
  }
}
