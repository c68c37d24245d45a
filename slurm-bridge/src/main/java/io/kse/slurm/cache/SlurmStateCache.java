package io.kse.slurm.cache;

import io.kse.slurm.JobListing;
import io.kse.slurm.MetricNames;
import io.kse.slurm.NodeListing;
import io.kse.slurm.PlaceholderOwner;
import io.kse.slurm.PlaceholderTag;
import io.kse.slurm.SlurmClient;
import io.kse.slurm.SlurmException;
import io.kse.slurm.SlurmJob;
import io.kse.slurm.SlurmNode;
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
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Slurm's jobs and nodes in memory, so that kube-scheduler requests are answered without calling
 * Slurm. One thread polls: jobs and nodes with {@code update_time} (an unchanged queue or node
 * table costs one small answer), and full listings every resync interval. Readers see an immutable
 * snapshot swapped in atomically, with O(1) lookups by job id, by pod UID and by node name.
 *
 * <p>A job missing from one listing is not reported gone: slurmctld restarting, or a listing racing
 * a purge, must not look like "the job ended". Only a second full listing without it confirms
 * removal.
 */
public final class SlurmStateCache implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(SlurmStateCache.class);

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

  /** One consistent view of Slurm. */
  public record Snapshot(
      Map<Long, SlurmJob> jobs,
      Map<String, Long> jobByKey,
      Map<String, SlurmNode> nodes,
      Instant asOf) {
    static final Snapshot EMPTY = new Snapshot(Map.of(), Map.of(), Map.of(), Instant.EPOCH);
  }

  private final SlurmClient client;
  private final Duration pollInterval;
  private final Duration resyncInterval;
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

  // poller-thread state
  private Instant since = Instant.EPOCH;
  private Instant nodesSince = Instant.EPOCH;
  private Instant lastFullListing = Instant.EPOCH;
  private Set<Long> missingOnce = new HashSet<>();

  public SlurmStateCache(
      SlurmClient client,
      Duration pollInterval,
      Duration resyncInterval,
      Clock clock,
      MeterRegistry registry) {
    this.client = client;
    this.pollInterval = pollInterval;
    this.resyncInterval = resyncInterval;
    this.clock = clock;
    this.pollTimer =
        Timer.builder(MetricNames.CACHE_POLL)
            .description("One poll of Slurm's jobs and nodes")
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
        .description("Seconds since the last successful poll of Slurm")
        .baseUnit("seconds")
        .register(registry);
    Gauge.builder(MetricNames.CACHE_JOBS, this, c -> c.snapshot.jobs().size())
        .description("Jobs in the Slurm cache")
        .register(registry);
    Gauge.builder(MetricNames.IMPOSTOR_JOBS, this, SlurmStateCache::impostors)
        .description(
            "Jobs whose comment carries this cluster's placeholder tag but that another Slurm user"
                + " submitted: ignored, never cancelled")
        .register(registry);
    this.poller =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "kse-slurm-poller");
              t.setDaemon(true);
              return t;
            });
  }

  public void addJobListener(JobListener l) {
    jobListeners.add(l);
  }

  public void addNodeListener(NodeListener l) {
    nodeListeners.add(l);
  }

  /**
   * Polls once more on the poller thread, soon: someone hinted that Slurm just changed (an
   * allocation hint). Calls while one is queued fold into it, and it runs at least {@code minGap}
   * after the previous poll ended, so a flood of hints adds at most one poll per {@code minGap}.
   */
  public void pollSoon(Duration minGap) {
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

  /** Starts polling in the background; the first poll runs at once. */
  public void start() {
    poller.scheduleWithFixedDelay(
        this::pollQuietly, 0, pollInterval.toMillis(), TimeUnit.MILLISECONDS);
  }

  /** True once jobs and nodes were each read successfully at least once. */
  public boolean synced() {
    return jobsSynced && nodesSynced;
  }

  /** Time since the last successful poll (a very large value before the first). */
  public Duration age() {
    return Duration.between(lastSuccess, clock.instant());
  }

  /** Why the last poll failed, if it did. */
  public Snapshot snapshot() {
    return snapshot;
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

  public Optional<SlurmNode> node(String name) {
    return Optional.ofNullable(snapshot.nodes().get(name));
  }

  public Collection<SlurmNode> nodes() {
    return snapshot.nodes().values();
  }

  /**
   * Polls once, synchronously (the background thread calls this too). Public so tests and callers
   * who just changed Slurm can refresh without waiting.
   */
  public synchronized void pollOnce() {
    long start = System.nanoTime();
    Instant now = clock.instant();
    boolean full = Duration.between(lastFullListing, now).compareTo(resyncInterval) >= 0;
    JobListing listing = client.jobsChangedSince(full ? Instant.EPOCH : since);
    NodeListing nodes = client.nodesChangedSince(full ? Instant.EPOCH : nodesSince);
    Instant observed = clock.instant();
    Snapshot old = snapshot;
    List<JobChange> jobChanges = new ArrayList<>();
    Map<Long, SlurmJob> jobs = old.jobs();
    if (listing.changed()) { // a changed listing is always complete
      since = listing.asOf();
      lastFullListing = now;
      jobs = merge(old, listing, observed, jobChanges);
    }
    Map<String, SlurmNode> nodeMap = old.nodes();
    if (nodes.changed()) { // the node table only when a node changed (steady: one small answer)
      nodesSince = nodes.asOf();
      Map<String, SlurmNode> byName = new HashMap<>();
      nodes.nodes().forEach(n -> byName.put(n.name(), n));
      nodeMap = Map.copyOf(byName);
    }
    snapshot =
        new Snapshot(
            jobs,
            jobs == old.jobs() ? old.jobByKey() : indexByKey(jobs.values()),
            nodeMap,
            observed);
    jobsSynced = true;
    nodesSynced = true;
    lastSuccess = observed;
    lastError = Optional.empty();
    lastPollEndNanos = System.nanoTime();
    pollTimer.record(Duration.ofNanos(lastPollEndNanos - start));
    jobChanges.forEach(c -> notifyJob(c));
    notifyNodes(old.nodes(), snapshot.nodes());
  }

  /**
   * Reads one job now and puts what Slurm says of it into the snapshot (an allocation hint named
   * it): one small answer, where a listing is slurmctld's whole job table whenever anything changed
   * — in a burst, every poll. Under the poll's lock, so a listing read before this never lands
   * after it. A job Slurm does not have is left to the listings.
   */
  public synchronized void refreshJob(long jobId) {
    Optional<SlurmJob> now = client.job(jobId);
    Snapshot old = snapshot;
    SlurmJob before = old.jobs().get(jobId);
    if (now.isEmpty() || now.get().equals(before)) {
      return;
    }
    Map<Long, SlurmJob> jobs = new HashMap<>(old.jobs());
    jobs.put(jobId, now.get());
    jobs = Map.copyOf(jobs);
    // the rest of the snapshot is as old as before: its asOf (the cache's age) stays
    snapshot = new Snapshot(jobs, indexByKey(jobs.values()), old.nodes(), old.asOf());
    Instant observed = clock.instant();
    recordLag(now.get(), observed);
    notifyJob(new JobChange(Optional.ofNullable(before), now, observed));
  }

  private void pollQuietly() {
    try {
      pollOnce();
    } catch (SlurmException e) {
      if (lastError.isEmpty()) {
        LOG.warn("slurm_poll_failed error={} cacheAgeMs={}", e.getMessage(), age().toMillis());
      }
      lastError = Optional.of(e);
    } catch (RuntimeException e) {
      LOG.error("slurm_poll_crashed", e);
    }
  }

  /** Diffs a full listing against the old jobs; keeps jobs missing only once. */
  private Map<Long, SlurmJob> merge(
      Snapshot old, JobListing listing, Instant observed, List<JobChange> changes) {
    Map<Long, SlurmJob> next = new HashMap<>();
    for (SlurmJob j : listing.jobs()) {
      next.put(j.id(), j);
      SlurmJob before = old.jobs().get(j.id());
      if (before == null || !before.equals(j)) {
        changes.add(new JobChange(Optional.ofNullable(before), Optional.of(j), observed));
        recordLag(j, observed);
      }
    }
    Set<Long> stillMissing = new HashSet<>();
    for (SlurmJob j : old.jobs().values()) {
      if (next.containsKey(j.id())) {
        continue;
      }
      if (missingOnce.contains(j.id())) {
        changes.add(new JobChange(Optional.of(j), Optional.empty(), observed));
      } else {
        stillMissing.add(j.id());
        next.put(j.id(), j); // keep it until a second listing confirms
      }
    }
    missingOnce = stillMissing;
    if (!stillMissing.isEmpty()) {
      // confirm on the next poll with a full listing, not a 304
      lastFullListing = Instant.EPOCH;
    }
    return Map.copyOf(next);
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
    lastFullListing = Instant.EPOCH; // re-index on the next poll
  }

  /** The job's placeholder tag, if the job is one of ours to act on ({@link PlaceholderOwner}). */
  public Optional<PlaceholderTag> ours(SlurmJob job) {
    return owner.tagOf(job);
  }

  /** Jobs that carry our tag under another Slurm user, now in Slurm. */
  public int impostors() {
    return impostors.size();
  }

  private volatile PlaceholderOwner owner = PlaceholderOwner.ANYONE;
  private volatile Set<Long> impostors = Set.of();

  private Map<String, Long> indexByKey(Collection<SlurmJob> jobs) {
    Map<String, SlurmJob> best = new HashMap<>();
    PlaceholderOwner who = owner;
    Set<Long> seenImpostors = new HashSet<>();
    for (SlurmJob j : jobs) {
      if (who.impostor(j)) {
        seenImpostors.add(j.id());
        if (!impostors.contains(j.id())) {
          LOG.warn(
              "placeholder_impostor slurmJob={} slurmUser=\"{}\" claims=\"{}\" action=ignore",
              j.id(),
              printable(j.user()),
              printable(j.comment()));
        }
        continue;
      }
      who.tagOf(j).ifPresent(tag -> best.merge(tag.key(), j, SlurmStateCache::preferred));
    }
    impostors = Set.copyOf(seenImpostors);
    Map<String, Long> out = new HashMap<>();
    best.forEach((key, j) -> out.put(key, j.id()));
    return Map.copyOf(out);
  }

  /** Text from Slurm that any user wrote, safe on one log line. */
  private static String printable(String s) {
    String cut = s.length() > 200 ? s.substring(0, 200) + "…" : s;
    return cut.replaceAll("[\\p{Cntrl}\"\\\\]", "?");
  }

  /** A live job beats an ended one; otherwise the newer (higher id) wins. */
  private static SlurmJob preferred(SlurmJob a, SlurmJob b) {
    boolean aLive = !a.state().isFinal();
    boolean bLive = !b.state().isFinal();
    if (aLive != bLive) {
      return aLive ? a : b;
    }
    return a.id() >= b.id() ? a : b;
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
