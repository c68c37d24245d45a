package io.kse.slurm.cache;

import io.kse.slurm.ApiVersion;
import io.kse.slurm.JobState;
import io.kse.slurm.MetricNames;
import io.kse.slurm.NodeListing;
import io.kse.slurm.PlaceholderOwner;
import io.kse.slurm.PlaceholderTag;
import io.kse.slurm.SlurmClient;
import io.kse.slurm.SlurmException;
import io.kse.slurm.SlurmJob;
import io.kse.slurm.SlurmNode;
import io.kse.slurm.StateCadence;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Our placeholder jobs and Slurm's nodes in memory, so that kube-scheduler requests are answered
 * without calling Slurm. Readers see an immutable snapshot swapped in atomically, with O(1) lookups
 * by job id, by placement key and by node name.
 *
 * <p>What it costs slurmctld grows with our own jobs, not with the cluster ({@link StateCadence}):
 * each pass checks the states of our live placeholders ({@code jobs/state}, 200 ids a call, where
 * slurmrestd has it: v0.0.41+) and reads in full only the ones whose state changed, the ones we
 * wait on and, slowly, the running ones; slurmctld's whole job table, whose size is everyone's
 * jobs, is read only at start, on {@link #resyncSoon()} (takeover) and every safety-net period,
 * which is what finds orphans and whatever a lost hook missed. Jobs become known when we submit
 * them ({@link #tracking}), when a hint names them, or from that listing.
 *
 * <p>A job missing once is not reported gone: slurmctld restarting, or an answer racing a purge,
 * must not look like "the job ended". A second miss, from any check, confirms removal.
 *
 * <p>Other users' jobs are not kept. The one thing this cache needs of them, which job a
 * placeholder preempted, comes from Slurm's end hook ({@link #endedElsewhere}): the job is read
 * once and, if it lost its run, reported to the job listeners as the change from that run.
 */
public final class SlurmStateCache implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(SlurmStateCache.class);

  /** A job that changed is checked every pass for this long: more changes usually follow. */
  static final Duration HOT_AFTER_CHANGE = Duration.ofSeconds(10);

  /**
   * How long after Slurm's last allocation hint its hooks count as delivering: meanwhile, on
   * slurmrestd without batched state checks (22.05), a running job that changed is not read every
   * pass — its end comes by hook — but at the running-read cadence. A pending one still is.
   */
  static final Duration HOOKS_DELIVER_FOR = Duration.ofMinutes(10);

  /** How long an end hint of another user's job waits for that job to settle. */
  static final Duration END_HINT_TTL = Duration.ofSeconds(60);

  /**
   * The least time between a listing and the next one a lost submission answer asks for: a storm of
   * timeouts (an overloaded slurmrestd) must not list slurmctld's whole table back to back.
   */
  static final Duration LOST_ANSWER_LISTING_GAP = Duration.ofSeconds(60);

  /** Listener of job changes; called on the poller thread, in observation order. */
  @FunctionalInterface
  public interface JobListener {
    void onJobChange(JobChange change);
  }

  /** Listener of node changes (any field); called on the poller thread. */
  @FunctionalInterface
  public interface NodeListener {
    void onNodeChange(Optional<SlurmNode> before, Optional<SlurmNode> after);
  }

  /**
   * One consistent view of Slurm: our placeholders and every node. {@code duplicatesByKey}: live
   * placeholders under a placement key besides the one {@code jobByKey} keeps (a submission that
   * timed out had reached Slurm, and the retry made a second).
   */
  public record Snapshot(
      Map<Long, SlurmJob> jobs,
      Map<String, Long> jobByKey,
      Map<String, List<Long>> duplicatesByKey,
      Map<String, SlurmNode> nodes,
      Instant asOf) {
    static final Snapshot EMPTY =
        new Snapshot(Map.of(), Map.of(), Map.of(), Map.of(), Instant.EPOCH);
  }

  /** Another user's job that Slurm's end hook named, on these nodes, at that time. */
  private record EndHint(List<String> nodes, Instant at) {}

  private final SlurmClient client;
  private final StateCadence cadence;
  private final Clock clock;
  private final List<JobListener> jobListeners = new CopyOnWriteArrayList<>();
  private final List<NodeListener> nodeListeners = new CopyOnWriteArrayList<>();
  private final Timer pollTimer;
  private final Timer lagTimer;
  private final ScheduledExecutorService poller;
  private final java.util.concurrent.atomic.AtomicBoolean extraPollQueued =
      new java.util.concurrent.atomic.AtomicBoolean();
  private volatile long lastPollEndNanos;

  private volatile Snapshot snapshot = Snapshot.EMPTY;
  private volatile boolean jobsSynced;
  private volatile boolean nodesSynced;
  private volatile Instant lastSuccess = Instant.EPOCH;
  private volatile Optional<SlurmException> lastError = Optional.empty();

  // written by any thread: jobs we just submitted or changed, or that a hint named
  private final Set<Long> tracked = ConcurrentHashMap.newKeySet();
  private final Map<Long, Instant> hotUntil = new ConcurrentHashMap<>();
  private final Map<Long, EndHint> endHints = new ConcurrentHashMap<>();
  private volatile boolean resyncRequested = true;
  private volatile Instant lastAllocationHint = Instant.EPOCH;

  // poller-thread state (under the lock)
  private Instant nodesSince = Instant.EPOCH;
  private Instant lastFullListing = Instant.EPOCH;
  private Instant lastNodeListing = Instant.EPOCH;
  private final Map<Long, Instant> lastRead = new HashMap<>();
  private final Map<Long, Instant> lastStateCheck = new HashMap<>();
  private final Set<Long> missingOnce = new HashSet<>();

  public SlurmStateCache(
      SlurmClient client, StateCadence cadence, Clock clock, MeterRegistry registry) {
    this.client = client;
    this.cadence = cadence;
    this.clock = clock;
    this.pollTimer =
        Timer.builder(MetricNames.CACHE_POLL)
            .description("One pass of the Slurm state cache: checks, reads, listings due")
            .serviceLevelObjectives(
                Duration.ofMillis(5),
                Duration.ofMillis(20),
                Duration.ofMillis(50),
                Duration.ofMillis(100),
                Duration.ofMillis(250),
                Duration.ofSeconds(1))
            .register(registry);
    this.lagTimer =
        Timer.builder(MetricNames.CACHE_VISIBLE_LAG)
            .description(
                "Slurm event time (start/end/submit, whole seconds) to the cache seeing it; an upper"
                    + " bound, since Slurm truncates its times to the second")
            .serviceLevelObjectives(
                Duration.ofMillis(250),
                Duration.ofMillis(500),
                Duration.ofSeconds(1),
                Duration.ofMillis(1500),
                Duration.ofSeconds(2),
                Duration.ofSeconds(5))
            .register(registry);
    Gauge.builder(MetricNames.CACHE_AGE, this, c -> c.age().toMillis() / 1000.0)
        .description("Seconds since the last successful pass over Slurm")
        .baseUnit("seconds")
        .register(registry);
    Gauge.builder(MetricNames.CACHE_JOBS, this, c -> c.snapshot.jobs().size())
        .description("Placeholder jobs of ours in the Slurm cache")
        .register(registry);
    Gauge.builder(MetricNames.IMPOSTOR_JOBS, this, SlurmStateCache::impostors)
        .description(
            "Jobs whose comment carries this cluster's placeholder tag but that another Slurm user"
                + " submitted: ignored, never cancelled (counted at each full listing)")
        .register(registry);
    this.poller =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "kse-slurm-poller");
              t.setDaemon(true);
              return t;
            });
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

  public void addJobListener(JobListener l) {
    jobListeners.add(l);
  }

  public void addNodeListener(NodeListener l) {
    nodeListeners.add(l);
  }

  /**
   * Runs one more pass on the poller thread, soon: someone hinted that Slurm just changed. Calls
   * while one is queued fold into it, and it runs at least {@code minGap} after the previous pass
   * ended, so a flood of hints adds at most one pass per {@code minGap}.
   */
  public void pollSoon(Duration minGap) {
    if (!jobsSynced) {
      return; // the first listing reads everything (see refreshJob)
    }
    if (!extraPollQueued.compareAndSet(false, true)) {
      return;
    }
    long wait = Math.max(0, lastPollEndNanos + minGap.toNanos() - System.nanoTime());
    try {
      poller.schedule(
          () -> {
            extraPollQueued.set(false);
            pollQuietly();
          },
          wait,
          TimeUnit.NANOSECONDS);
    } catch (java.util.concurrent.RejectedExecutionException e) {
      extraPollQueued.set(false); // closed
    }
  }

  /** Starts polling in the background; the first pass (with the full listing) runs at once. */
  public void start() {
    poller.scheduleWithFixedDelay(
        this::pollQuietly, 0, cadence.poll().toMillis(), TimeUnit.MILLISECONDS);
  }

  /** True once jobs and nodes were each listed successfully at least once. */
  public boolean synced() {
    return jobsSynced && nodesSynced;
  }

  /** Time since the last successful pass (a very large value before the first). */
  public Duration age() {
    return Duration.between(lastSuccess, clock.instant());
  }

  public Snapshot snapshot() {
    return snapshot;
  }

  /** Why the latest pass failed (Slurm unreachable, refused…); empty once a pass succeeds. */
  public Optional<SlurmException> lastError() {
    return lastError;
  }

  public Optional<SlurmJob> job(long id) {
    return Optional.ofNullable(snapshot.jobs().get(id));
  }

  /**
   * The placeholder job kept under a placement key ({@link PlaceholderTag#key()}: a pod's UID, or
   * its group's key): the live job if there is one, else the newest.
   */
  public Optional<SlurmJob> jobFor(String placementKey) {
    Snapshot s = snapshot;
    Long id = s.jobByKey().get(placementKey);
    return id == null ? Optional.empty() : Optional.ofNullable(s.jobs().get(id));
  }

  /** Live placeholders under this key besides {@link #jobFor}'s: each one too many. */
  public List<SlurmJob> duplicatesOf(String placementKey) {
    Snapshot s = snapshot;
    return s.duplicatesByKey().getOrDefault(placementKey, List.of()).stream()
        .map(s.jobs()::get)
        .filter(java.util.Objects::nonNull)
        .toList();
  }

  public Optional<SlurmNode> node(String name) {
    return Optional.ofNullable(snapshot.nodes().get(name));
  }

  public Collection<SlurmNode> nodes() {
    return snapshot.nodes().values();
  }

  /**
   * From now on, check this job every pass until it has been seen (and for a while after): we just
   * submitted or changed it, or a hint named it.
   */
  public void track(long jobId) {
    if (!snapshot.jobs().containsKey(jobId)) {
      tracked.add(jobId);
    }
    hotUntil.put(jobId, clock.instant().plus(HOT_AFTER_CHANGE));
  }

  /**
   * Slurm's allocation hook named this job: {@link #track} it, and note that the hooks deliver
   * ({@link #HOOKS_DELIVER_FOR}), which makes the 22.05 checks cheaper.
   */
  public void allocationHinted(long jobId) {
    lastAllocationHint = clock.instant();
    track(jobId);
  }

  /** Whether this job is one the cache keeps or is looking for (one of ours). */
  public boolean knows(long jobId) {
    return snapshot.jobs().containsKey(jobId) || tracked.contains(jobId);
  }

  /**
   * Whether this job is being looked for and not read yet: tracked (we submitted it, or a hint
   * named it) and not in the snapshot. False once read (kept if ours, dropped if not) or missed
   * twice.
   */
  public boolean lookingFor(long jobId) {
    return tracked.contains(jobId) && !snapshot.jobs().containsKey(jobId);
  }

  /**
   * Whether a hint named this job lately and reading it showed it is not one of ours (another
   * user's, another cluster's) or Slurm twice did not have it. A pod's annotation can name any job:
   * callers that take such names as hints skip these, so one forged name costs a read, not a read
   * on every kube-scheduler retry.
   */
  public boolean dismissed(long jobId) {
    Instant at = dismissed.get(jobId);
    return at != null && clock.instant().isBefore(at.plus(DISMISSED_FOR));
  }

  /** Whether a job someone names is worth a read: neither known nor dismissed lately. */
  public boolean worthLookingFor(long jobId) {
    return !knows(jobId) && !dismissed(jobId);
  }

  /** How long a dismissed job is not looked for again. */
  static final Duration DISMISSED_FOR = Duration.ofMinutes(10);

  // written by the poller: jobs looked for and found not ours or not there (bounded: cleared past
  // 10,000, at worst a read each again)
  private final Map<Long, Instant> dismissed = new ConcurrentHashMap<>();

  private void dismiss(long jobId, Instant at) {
    if (dismissed.size() >= 10_000) {
      dismissed.clear();
    }
    dismissed.put(jobId, at);
  }

  /** The whole job table on the next pass: after a takeover, or when in doubt. */
  public void resyncSoon() {
    resyncRequested = true;
  }

  private final java.util.concurrent.atomic.AtomicLong listingsBegun =
      new java.util.concurrent.atomic.AtomicLong();
  private volatile long lastListing;

  /** How long the last full listing took: slurmrestd builds the whole table for it. */
  private volatile Duration lastListingTook = Duration.ZERO;

  /**
   * The safety net's period: the configured one, stretched so that the listing takes at most 1/20
   * of slurmrestd's time (at 20,000 jobs on 10,000 nodes one took 54 s: every 18 min, not every 5).
   */
  Duration safetyNetPeriod() {
    if (lastListingTook.compareTo(Duration.ofSeconds(1)) < 0) {
      return cadence.safetyNet(); // a cheap listing: as configured (tests list every pass)
    }
    Duration share = lastListingTook.multipliedBy(20);
    return share.compareTo(cadence.safetyNet()) > 0 ? share : cadence.safetyNet();
  }

  /**
   * How many full listings of the job table have begun: a number to compare with {@link
   * #listedSince}.
   */
  public long listingsBegun() {
    return listingsBegun.get();
  }

  /**
   * Whether a full listing that began after {@code listingsBegun} was {@link #listingsBegun} has
   * succeeded: the cache then shows every job submitted before that moment.
   */
  public boolean listedSince(long listingsBegun) {
    return lastListing > listingsBegun;
  }

  private final List<Runnable> afterListing = new CopyOnWriteArrayList<>();

  /** Runs {@code r} once, on the poller thread, after the next full listing has been published. */
  public void afterNextListing(Runnable r) {
    afterListing.add(r);
  }

  /**
   * {@code client}, telling this cache of every job submitted, changed or cancelled through it: the
   * cache follows our jobs from the moment we make them, without listing anyone's. A submission
   * that got no answer may have made a job all the same (slurmrestd timed out after slurmctld took
   * it): the next pass lists Slurm's jobs to find it, so its retry's twin is found and cancelled.
   */
  public SlurmClient tracking(SlurmClient client) {
    return new TrackedSlurmClient(
        client, this::track, () -> lostAnswerAt = clock.instant(), this::cancelledByUs);
  }

  /**
   * We asked Slurm to cancel this job: of two placeholders under one key it is never the one kept,
   * even while Slurm still shows it running (the cancel may land after the next listing). Without
   * this, a duplicate we were cancelling could become the kept one and the kept one a duplicate,
   * and both would be cancelled.
   */
  private void cancelledByUs(long jobId) {
    cancelled.put(jobId, clock.instant());
    reindex = true;
  }

  // written by any thread: jobs we asked Slurm to cancel, until seen ended (or an hour on)
  private final Map<Long, Instant> cancelled = new ConcurrentHashMap<>();
  private volatile boolean reindex;

  // a submission got no answer at this time: the next listing due after it
  // (LOST_ANSWER_LISTING_GAP)
  private volatile Instant lostAnswerAt = Instant.MIN;

  /**
   * Slurm's end hook named another user's job that ran on {@code nodes}: if it may have been
   * preempted for a placeholder of ours (one pends, or started within the attribution window), the
   * next passes read it once it settled and, if it lost its run, report that to the job listeners.
   * Otherwise it is ignored: one map lookup per ended job of the cluster.
   */
  public void endedElsewhere(long jobId, List<String> nodes) {
    if (nodes.isEmpty() || !mayBePreemptedForUs()) {
      LOG.debug("end_hint_ignored slurmJob={} nodes={}", jobId, nodes);
      return;
    }
    if (endHints.size() < 10_000) { // a flood of ends: the rest is not worth a read
      endHints.put(jobId, new EndHint(List.copyOf(nodes), clock.instant()));
      LOG.debug("end_hint_kept slurmJob={} nodes={}", jobId, nodes);
    }
  }

  /** A placeholder of ours pends or started within the attribution window. */
  private boolean mayBePreemptedForUs() {
    Instant recent = clock.instant().minus(END_HINT_TTL);
    if (!tracked.isEmpty()) {
      return true;
    }
    for (SlurmJob j : snapshot.jobs().values()) {
      if (j.state() == JobState.PENDING
          || j.isAllocated() && j.startTime().map(t -> t.isAfter(recent)).orElse(true)) {
        return true;
      }
    }
    return false;
  }

  /**
   * One pass, synchronously (the background thread calls this too): the whole job table if due, the
   * checks and reads due, the node table if due. Public so tests and callers who just changed Slurm
   * can refresh without waiting. Whatever it learned before a call failed is kept.
   */
  public synchronized void pollOnce() {
    long start = System.nanoTime();
    Instant now = clock.instant();
    Pass pass = new Pass(snapshot);
    try {
      boolean full =
          resyncRequested
              || Duration.between(lastFullListing, now).compareTo(safetyNetPeriod()) >= 0
              || !lostAnswerAt.isBefore(lastFullListing) // a listing begun then may miss it
                  && Duration.between(lastFullListing, now).compareTo(LOST_ANSWER_LISTING_GAP) >= 0;
      List<Runnable> waiting = List.of();
      if (full) {
        resyncRequested = false;
        waiting = List.copyOf(afterListing); // those that came before this listing began
        long seq = listingsBegun.incrementAndGet();
        long began = System.nanoTime();
        try {
          listAll(pass, now);
          lastListing = seq;
          lastListingTook = Duration.ofNanos(System.nanoTime() - began);
        } catch (RuntimeException e) {
          resyncRequested = true;
          throw e;
        }
        jobsSynced = true;
        afterListing.removeAll(waiting);
      }
      listed = waiting;
      checkOurs(pass, now);
      readEndHints(pass, now);
      if (Duration.between(lastNodeListing, now).compareTo(cadence.nodes()) >= 0) {
        listNodes(pass, now);
        nodesSynced = true;
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
      publish(pass);
      lastPollEndNanos = System.nanoTime();
      pollTimer.record(Duration.ofNanos(lastPollEndNanos - start));
    }
    List<Runnable> run = listed;
    listed = List.of();
    for (Runnable r : run) {
      try {
        r.run();
      } catch (RuntimeException e) {
        LOG.error("slurm_after_listing_failed", e);
      }
    }
  }

  // the callbacks whose listing this pass read (poller thread)
  private List<Runnable> listed = List.of();

  /**
   * Reads one job now and puts what Slurm says of it into the snapshot (a hint named it). Under the
   * pass's lock, so an answer read before this never lands after it. A job that is not ours is not
   * kept; a job Slurm does not have is left to the checks.
   */
  public synchronized void refreshJob(long jobId) {
    if (!jobsSynced) {
      // a hint before the first listing (Slurm's hooks call a starting extender too): that listing
      // reads every job, and runs only once the owner is set; publishing a change earlier would
      // hand listeners a job before they can tell whose it is (seen in a 60-minute soak)
      return;
    }
    Optional<SlurmJob> now = client.job(jobId);
    if (now.isEmpty()) {
      return;
    }
    Pass pass = new Pass(snapshot);
    pass.observedJob(now.get(), clock.instant());
    // the rest of the snapshot is as old as before: its asOf (the cache's age) stays
    pass.keepAsOf = true;
    publish(pass);
  }

  /** Nodes one hint may have read one by one; a hint naming more lists the node table instead. */
  static final int MAX_NODE_READS = 32;

  /**
   * Slurm's node trigger named these nodes (down, drained, draining, failed, up or resumed;
   * manifests/slurm/kse-allocation-hint), or we just drained or resumed one: read each now ({@code
   * GET node/NAME}, a few KB) and tell the node listeners, instead of waiting for the node table.
   * More than {@link #MAX_NODE_READS} names, a name Slurm does not know, or a read that fails, and
   * the next pass lists the table instead. Under the pass's lock, like {@link #refreshJob}.
   */
  public synchronized void refreshNodes(Collection<String> names) {
    if (!nodesSynced) {
      return; // the first listing reads every node
    }
    if (names.size() > MAX_NODE_READS) {
      listNodesNextPass();
      return;
    }
    Map<String, SlurmNode> nodes = new HashMap<>(snapshot.nodes());
    try {
      for (String name : names) {
        Optional<SlurmNode> now = client.node(name);
        if (now.isEmpty()) {
          listNodesNextPass(); // a node removed or renamed: the table says which
          break;
        }
        nodes.put(name, now.get());
      }
    } catch (RuntimeException e) {
      listNodesNextPass();
      LOG.debug("node_read_failed nodes={} error={}", names, e.toString());
    } finally {
      Pass pass = new Pass(snapshot);
      pass.nodes = Map.copyOf(nodes);
      pass.keepAsOf = true; // the job side is as old as before
      publish(pass);
    }
  }

  /** The node table is due at once: the next pass lists it, whatever its interval. */
  private void listNodesNextPass() {
    lastNodeListing = Instant.EPOCH;
  }

  /** What one pass learned, applied to the snapshot at its end (even if a call failed). */
  private final class Pass {
    final Snapshot old;
    final Map<Long, SlurmJob> jobs;
    Map<String, SlurmNode> nodes;
    final List<JobChange> changes = new ArrayList<>();
    final List<JobChange> elsewhere = new ArrayList<>();
    final Set<Long> found = new HashSet<>();
    Instant observed;
    boolean jobsChanged;
    boolean keepAsOf;

    Pass(Snapshot old) {
      this.old = old;
      this.jobs = new HashMap<>(old.jobs());
      this.nodes = old.nodes();
      this.observed = clock.instant();
    }

    /** Slurm says this of a job: keep it if it is ours, and note what changed. */
    void observedJob(SlurmJob j, Instant at) {
      observed = at;
      lastRead.put(j.id(), at);
      missingOnce.remove(j.id());
      // tracked until this pass is published, not before: in between the job would be in neither
      // the snapshot nor the tracked set, and an end hook arriving then must still see it
      found.add(j.id());
      if (owner.tagOf(j).isEmpty()) { // a hint or a caller named a job that is not ours
        if (jobs.remove(j.id()) != null) {
          jobsChanged = true;
        }
        if (tracked.contains(j.id())) {
          dismiss(j.id(), at);
        }
        return;
      }
      SlurmJob before = jobs.put(j.id(), j);
      if (before == null || !before.equals(j)) {
        jobsChanged = true;
        changes.add(new JobChange(Optional.ofNullable(before), Optional.of(j), at));
        hotUntil.put(j.id(), at.plus(HOT_AFTER_CHANGE));
        recordLag(j, at);
      }
    }

    /** Slurm did not have the job this time: gone on the second miss in a row. */
    void missed(long id, Instant at) {
      if (!missingOnce.remove(id)) {
        missingOnce.add(id);
        hotUntil.put(id, at.plus(HOT_AFTER_CHANGE));
        return;
      }
      if (tracked.remove(id) && !jobs.containsKey(id)) {
        dismiss(id, at); // looked for and never there
      }
      gone(id, at);
    }

    /** The job is no longer Slurm's: forgotten, and its listeners told. */
    void gone(long id, Instant at) {
      missingOnce.remove(id);
      hotUntil.remove(id);
      lastRead.remove(id);
      lastStateCheck.remove(id);
      SlurmJob before = jobs.remove(id);
      if (before != null) {
        jobsChanged = true;
        changes.add(new JobChange(Optional.of(before), Optional.empty(), at));
      }
    }
  }

  /** slurmctld's whole job table: what we keep is ours; ours missing from it count as a miss. */
  private void listAll(Pass pass, Instant now) {
    PlaceholderOwner who = owner;
    // kept as read: ours, and live impostors to count; everyone else's jobs are never held
    List<SlurmJob> listing =
        client.allJobs(j -> who.tagOf(j).isPresent() || who.impostor(j) && !j.state().isFinal());
    Instant at = clock.instant();
    lastFullListing = now;
    Set<Long> seen = new HashSet<>();
    Set<Long> seenImpostors = new HashSet<>();
    for (SlurmJob j : listing) {
      if (who.impostor(j) && !j.state().isFinal()) { // an ended copy can do no harm
        seenImpostors.add(j.id());
        if (!impostors.contains(j.id())) {
          LOG.warn(
              "placeholder_impostor slurmJob={} slurmUser=\"{}\" claims=\"{}\" action=ignore",
              j.id(),
              printable(j.user()),
              printable(j.comment()));
        }
      }
      if (who.tagOf(j).isPresent()) {
        seen.add(j.id());
        pass.observedJob(j, at);
      }
    }
    impostors = Set.copyOf(seenImpostors);
    for (Long id : List.copyOf(pass.jobs.keySet())) {
      SlurmJob j = pass.jobs.get(id);
      if (who.tagOf(j).isEmpty()) { // no longer ours: the owner became known since
        pass.jobs.remove(id);
        pass.jobsChanged = true;
      } else if (!seen.contains(id) && !tracked.contains(id)) {
        if (j.state().isFinal()) {
          pass.gone(id, at); // ended, then purged (MinJobAge): nothing to confirm by a read
        } else {
          pass.missed(id, at); // live: a second miss in a row says gone
        }
      }
    }
    LOG.debug("slurm_full_listing ours={} impostors={}", seen.size(), seenImpostors.size());
  }

  /**
   * The checks due: states of our live jobs in batches where slurmrestd can, then full reads of the
   * jobs whose state changed, of the jobs we just made or were told of, and of the rest at their
   * cadence — at most {@link StateCadence#maxReadsPerPoll} a pass.
   */
  private void checkOurs(Pass pass, Instant now) {
    boolean batch = client.apiVersion() != ApiVersion.V0038;
    boolean hooksDeliver = ago(lastAllocationHint, now).compareTo(HOOKS_DELIVER_FOR) < 0;
    List<Long> states = new ArrayList<>();
    List<Long> urgent = new ArrayList<>(tracked);
    urgent.removeIf(pass.jobs::containsKey);
    List<Long> due = new ArrayList<>();
    for (SlurmJob j : pass.jobs.values()) {
      long id = j.id();
      boolean hot = hotUntil.getOrDefault(id, Instant.EPOCH).isAfter(now);
      // A placeholder that ended is not read again: only a hand requeue brings it back, and a
      // requeued job's start calls the allocation hook (the safety-net listing finds it, and drops
      // the job once Slurm purged it). Read at the running cadence, the ended placeholders of a
      // 200-pod burst kept an idle extender at the per-pass cap for MinJobAge (57 reads a second).
      boolean over = j.state().isFinal();
      boolean pending = j.state() == JobState.PENDING;
      Duration every = pending ? cadence.pendingRead() : cadence.runningRead();
      boolean readDue = !over && ago(lastRead.get(id), now).compareTo(every) >= 0;
      // Without batched state checks, a live job that just changed is read every pass: a running
      // one only while the hooks are not heard (its end comes by hook), a pending one always (its
      // allocation hint may be the one that was lost, as in a failover).
      boolean readEveryPass = !batch && hot && !over && (pending || !hooksDeliver);
      if (missingOnce.contains(id) || readEveryPass) {
        urgent.add(id);
      } else if (readDue) {
        due.add(id);
      } else if (batch && (hot || !over)) {
        states.add(id);
      }
    }
    if (!states.isEmpty()) {
      states.sort(
          java.util.Comparator.comparing(id -> lastStateCheck.getOrDefault(id, Instant.EPOCH)));
      List<Long> asked = states.subList(0, Math.min(states.size(), cadence.maxStateIdsPerPoll()));
      Map<Long, JobState> got = client.jobStates(asked);
      Instant at = clock.instant();
      for (long id : asked) {
        lastStateCheck.put(id, at);
        JobState s = got.get(id);
        SlurmJob cached = pass.jobs.get(id);
        if (s == null) {
          pass.missed(id, at);
        } else if (cached != null && s != cached.state()) {
          urgent.add(0, id); // changed: read it in full this pass
        }
      }
    }
    due.sort(java.util.Comparator.comparing(id -> lastRead.getOrDefault(id, Instant.EPOCH)));
    List<Long> reads = new ArrayList<>(urgent);
    reads.addAll(due);
    int n = 0;
    for (long id : new java.util.LinkedHashSet<>(reads)) {
      if (n++ >= cadence.maxReadsPerPoll()) {
        break; // the rest next pass
      }
      Optional<SlurmJob> j = client.job(id);
      Instant at = clock.instant();
      if (j.isPresent()) {
        pass.observedJob(j.get(), at);
      } else {
        lastRead.put(id, at);
        pass.missed(id, at);
      }
    }
  }

  /** Other users' jobs the end hook named: one read each once settled; a lost run is reported. */
  private void readEndHints(Pass pass, Instant now) {
    int n = 0;
    for (Map.Entry<Long, EndHint> e : List.copyOf(endHints.entrySet())) {
      long id = e.getKey();
      EndHint hint = e.getValue();
      if (ago(hint.at(), now).compareTo(END_HINT_TTL) > 0) {
        endHints.remove(id); // never settled: not worth a read any more
        continue;
      }
      if (n++ >= cadence.maxReadsPerPoll()) {
        continue; // the rest next pass
      }
      Optional<SlurmJob> j = client.job(id);
      Instant at = clock.instant();
      if (j.isEmpty()) {
        // slurmctld may not answer for a job it is requeuing at that instant: looked at again
        // until the hint's time is up, rather than a preemption left unattributed
        LOG.debug("end_hint_job_not_found slurmJob={}", id);
        continue;
      }
      if (owner.tagOf(j.get()).isPresent()) {
        endHints.remove(id); // ours after all (the checks follow ours)
        continue;
      }
      SlurmJob after = j.get();
      boolean lostRun =
          after.state() == JobState.PREEMPTED
              || after.state() == JobState.PENDING && after.restartCount() > 0;
      LOG.debug(
          "end_hint_read slurmJob={} state={} restarts={} start={} lostRun={}",
          id,
          after.state(),
          after.restartCount(),
          after.startTime().orElse(null),
          lostRun);
      if (lostRun) {
        pass.elsewhere.add(
            new JobChange(Optional.of(after.runBefore(hint.nodes(), at)), Optional.of(after), at));
        endHints.remove(id);
      } else if (after.state() != JobState.COMPLETING) {
        endHints.remove(id); // ended on its own, or already running again
      }
    }
  }

  /** The node table: whole, or only when a node changed where slurmrestd can say so (v0.0.45). */
  private void listNodes(Pass pass, Instant now) {
    NodeListing nodes = client.nodesChangedSince(nodesSince);
    lastNodeListing = now;
    if (nodes.changed()) {
      nodesSince = nodes.asOf();
      Map<String, SlurmNode> byName = new HashMap<>();
      nodes.nodes().forEach(n -> byName.put(n.name(), n));
      pass.nodes = Map.copyOf(byName);
    }
  }

  private static Duration ago(Instant then, Instant now) {
    return then == null ? Duration.ofDays(365) : Duration.between(then, now);
  }

  /** Swaps in what the pass learned, then tells the listeners. */
  private void publish(Pass pass) {
    Snapshot old = pass.old;
    Map<Long, SlurmJob> jobs = pass.jobsChanged ? Map.copyOf(pass.jobs) : old.jobs();
    boolean cancelsSince = reindex;
    reindex = false;
    if (pass.jobsChanged) {
      Instant forgetBefore = clock.instant().minus(Duration.ofHours(1));
      cancelled
          .entrySet()
          .removeIf(
              e -> {
                SlurmJob j = jobs.get(e.getKey());
                return j != null && j.state().isFinal() || e.getValue().isBefore(forgetBefore);
              });
    }
    Index index =
        pass.jobsChanged || cancelsSince
            ? indexByKey(jobs.values(), old.jobByKey())
            : new Index(old.jobByKey(), old.duplicatesByKey());
    snapshot =
        new Snapshot(
            jobs,
            index.kept(),
            index.duplicates(),
            pass.nodes,
            pass.keepAsOf ? old.asOf() : pass.observed);
    tracked.removeAll(pass.found);
    pass.changes.forEach(this::notifyJob);
    pass.elsewhere.forEach(this::notifyJob);
    notifyNodes(old.nodes(), snapshot.nodes());
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

  private void recordLag(SlurmJob j, Instant observed) {
    Instant event = j.endTime().or(j::startTime).orElse(j.submitTime());
    if (event.isAfter(Instant.EPOCH) && !event.isAfter(observed)) {
      Duration lag = Duration.between(event, observed);
      if (lag.compareTo(Duration.ofMinutes(1)) < 0) { // skip jobs first seen long after the fact
        lagTimer.record(lag);
      }
    }
  }

  /**
   * Whose placeholders this cache serves: another Kubernetes cluster's (one Slurm, several
   * clusters) and impostors (our tag, another Slurm user) are never found by {@link #jobFor}, so
   * nothing here acts on them.
   */
  public synchronized void owner(PlaceholderOwner owner) {
    this.owner = owner;
    resyncRequested = true; // what is ours may have changed: the whole table on the next pass
  }

  /** The job's placeholder tag, if the job is one of ours to act on ({@link PlaceholderOwner}). */
  public Optional<PlaceholderTag> ours(SlurmJob job) {
    return owner.tagOf(job);
  }

  /** Live jobs that carry our tag under another Slurm user, at the last full listing. */
  public int impostors() {
    return impostors.size();
  }

  private volatile PlaceholderOwner owner = PlaceholderOwner.ANYONE;
  private volatile Set<Long> impostors = Set.of();

  /** The job kept per placement key, and the live ones beside it. */
  private record Index(Map<String, Long> kept, Map<String, List<Long>> duplicates) {}

  private Index indexByKey(Collection<SlurmJob> jobs, Map<String, Long> keptBefore) {
    Map<String, SlurmJob> best = new HashMap<>();
    Map<String, List<SlurmJob>> live = new HashMap<>();
    PlaceholderOwner who = owner;
    for (SlurmJob j : jobs) {
      who.tagOf(j)
          .ifPresent(
              tag -> {
                best.merge(tag.key(), j, (a, b) -> preferred(a, b, keptBefore.get(tag.key())));
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
    return new Index(Map.copyOf(kept), Map.copyOf(duplicates));
  }

  /** Text from Slurm that any user wrote, safe on one log line. */
  private static String printable(String s) {
    String cut = s.length() > 200 ? s.substring(0, 200) + "…" : s;
    return cut.replaceAll("[\\p{Cntrl}\"\\\\]", "?");
  }

  /**
   * A live job beats an ended one; of live ones, one we have not asked Slurm to cancel beats one we
   * have, and one holding nodes beats one still pending (a pod may already be woken for it).
   * Between two alike, the one kept before stays kept: flipping would make the kept one a duplicate
   * to cancel while the other is being cancelled already. Otherwise the newer (higher id) wins.
   */
  private SlurmJob preferred(SlurmJob a, SlurmJob b, Long keptBefore) {
    int ra = rank(a);
    int rb = rank(b);
    if (ra != rb) {
      return ra > rb ? a : b;
    }
    if (keptBefore != null && (a.id() == keptBefore || b.id() == keptBefore)) {
      return a.id() == keptBefore ? a : b;
    }
    return a.id() >= b.id() ? a : b;
  }

  private int rank(SlurmJob j) {
    if (j.state().isFinal()) {
      return 0;
    }
    if (cancelled.containsKey(j.id())) {
      return 1;
    }
    return j.isAllocated() ? 3 : 2;
  }

  private void notifyJob(JobChange c) {
    for (JobListener l : jobListeners) {
      try {
        l.onJobChange(c);
      } catch (RuntimeException e) {
        LOG.error("slurm_job_listener_failed slurmJob={}", c.jobId(), e);
      }
    }
  }

  private void notifyNodes(Map<String, SlurmNode> before, Map<String, SlurmNode> after) {
    if (nodeListeners.isEmpty() || before.equals(after)) {
      return;
    }
    Set<String> names = new HashSet<>(before.keySet());
    names.addAll(after.keySet());
    for (String n : names) {
      SlurmNode b = before.get(n);
      SlurmNode a = after.get(n);
      if (b == null ? a != null : !b.equals(a)) {
        for (NodeListener l : nodeListeners) {
          try {
            l.onNodeChange(Optional.ofNullable(b), Optional.ofNullable(a));
          } catch (RuntimeException e) {
            LOG.error("slurm_node_listener_failed node={}", n, e);
          }
        }
      }
    }
  }

  @Override
  public void close() {
    poller.shutdownNow();
  }
}
