package io.kse.slurm.testing;

import io.kse.slurm.ApiVersion;
import io.kse.slurm.JobListing;
import io.kse.slurm.JobState;
import io.kse.slurm.JobSubmission;
import io.kse.slurm.JobUpdate;
import io.kse.slurm.SlurmClient;
import io.kse.slurm.SlurmJob;
import io.kse.slurm.SlurmNode;
import io.kse.slurm.SlurmNotFoundException;
import io.kse.slurm.SlurmUnavailableException;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;

/**
 * An in-memory Slurm for unit tests: jobs are pending until {@link #allocate} (or {@link
 * #allocateNext}) places them, and every state change is visible through the same {@link
 * SlurmClient} calls the real one answers. {@link #failWith} simulates an outage.
 */
public final class FakeSlurmClient implements SlurmClient {
  private final Map<Long, SlurmJob> jobs = new LinkedHashMap<>();
  private final Map<String, SlurmNode> nodes = new LinkedHashMap<>();
  private final AtomicLong nextId = new AtomicLong(100);
  private final List<JobSubmission> submissions = new ArrayList<>();
  private final Clock clock;
  private RuntimeException failure;
  private Instant lastChange = Instant.EPOCH;
  private int listCalls;

  public FakeSlurmClient(Clock clock, String... nodeNames) {
    this.clock = clock;
    for (String n : nodeNames) {
      nodes.put(n, node(n, "idle", Set.of(), ""));
    }
  }

  private static SlurmNode node(String name, String state, Set<String> flags, String reason) {
    return new SlurmNode(
        name,
        state,
        flags,
        reason,
        Set.of(),
        "gpu:h100:8",
        "gpu:h100:0",
        16,
        0,
        128000,
        List.of("training", "inference"));
  }

  private Runnable duringSubmit = () -> {};

  /** Runs {@code r} inside every following submit: a race with the submission in flight. */
  public synchronized void duringSubmit(Runnable r) {
    this.duringSubmit = r;
  }

  private Runnable duringNodeListing = () -> {};

  /**
   * Runs {@code r} inside every following node listing: something that happens while a cache pass
   * is under way, after it read its jobs and before it published what it learned.
   */
  public synchronized void duringNodeListing(Runnable r) {
    this.duringNodeListing = r;
  }

  /** Makes every following call throw {@code failure} until cleared with null. */
  public synchronized void failWith(RuntimeException failure) {
    this.failure = failure;
  }

  private void check() {
    if (failure != null) {
      throw failure;
    }
  }

  public synchronized List<JobSubmission> submissions() {
    return List.copyOf(submissions);
  }

  public synchronized int listCalls() {
    return listCalls;
  }

  /** Reads of one job by id. */
  public synchronized int jobCalls() {
    return jobCalls;
  }

  private int jobCalls;

  /** The ids read one by one, in order. */
  public synchronized List<Long> jobsRead() {
    return List.copyOf(jobsRead);
  }

  private final List<Long> jobsRead = new java.util.ArrayList<>();

  @Override
  public synchronized ApiVersion apiVersion() {
    return version;
  }

  private ApiVersion version = ApiVersion.V0044;

  /** Speaks {@code v} from now on (v0.0.38: no batched state checks, as slurmrestd 22.05). */
  public synchronized void speak(ApiVersion v) {
    this.version = v;
  }

  private boolean loseNextSubmitAnswer;

  /**
   * The next submission makes its job but its caller gets no answer, as when slurmrestd times out
   * after slurmctld took the job.
   */
  public synchronized void loseNextSubmitAnswer() {
    loseNextSubmitAnswer = true;
  }

  @Override
  public synchronized long submit(JobSubmission s) {
    long id = make(s);
    if (loseNextSubmitAnswer) {
      loseNextSubmitAnswer = false;
      throw new SlurmUnavailableException("submit failed: no answer from the fake within 5000 ms");
    }
    return id;
  }

  private long make(JobSubmission s) {
    check();
    duringSubmit.run();
    submissions.add(s);
    long id = nextId.getAndIncrement();
    put(
        new SlurmJob(
                id,
                s.tag().jobName(),
                s.tag().toComment(),
                JobState.PENDING,
                s.hold() ? "JobHeldUser" : "Priority",
                s.partition().orElse("training"),
                s.qos().orElse(""),
                List.of(),
                s.nodes(),
                clock.instant(),
                Optional.empty(),
                Optional.empty(),
                0,
                s.gresPerNode().map(g -> "gres:" + g).orElse(""),
                s.constraints().orElse(""),
                s.hold() ? 0 : 1000,
                clock.instant())
            .withUser(USER));
    return id;
  }

  /** The Slurm user the fake runs our requests as: the user of every job {@link #submit} makes. */
  public static final String USER = "kse";

  /**
   * Adds a held job that another Slurm user submitted with {@code comment}: e.g. a copy of a
   * placeholder's comment, which any user can read.
   */
  public synchronized long addJobAs(String user, String comment) {
    long id = nextId.getAndIncrement();
    put(
        new SlurmJob(
                id,
                "copy",
                comment,
                JobState.PENDING,
                "JobHeldUser",
                "inference",
                "",
                List.of(),
                1,
                clock.instant(),
                Optional.empty(),
                Optional.empty(),
                0,
                "",
                "",
                0,
                clock.instant())
            .withUser(user));
    return id;
  }

  /** Adds a job that is not a placeholder (e.g. training). */
  public synchronized long addForeignJob(String name, JobState state, List<String> onNodes) {
    long id = nextId.getAndIncrement();
    put(
        new SlurmJob(
                id,
                name,
                "",
                state,
                "None",
                "training",
                "",
                onNodes,
                onNodes.size(),
                clock.instant(),
                state == JobState.RUNNING ? Optional.of(clock.instant()) : Optional.empty(),
                Optional.empty(),
                0,
                "",
                "",
                1,
                clock.instant())
            .withUser("trainer"));
    return id;
  }

  /** Slurm places the job on {@code onNodes}: RUNNING. */
  public synchronized void allocate(long jobId, List<String> onNodes) {
    SlurmJob j = existing(jobId);
    put(withState(j, JobState.RUNNING, "None", onNodes, j.restartCount()));
  }

  /** Ends the job in {@code state} (CANCELLED, PREEMPTED, COMPLETED…). */
  public synchronized void end(long jobId, JobState state) {
    SlurmJob j = existing(jobId);
    put(withState(j, state, "None", j.nodes(), j.restartCount()));
  }

  /**
   * Slurm chooses the running job for preemption with a grace time: it keeps running, with its
   * preempt time set, until cancelled or its grace time ends.
   */
  public synchronized void preempt(long jobId) {
    put(preemptedAt(existing(jobId), clock.instant()));
  }

  /** Requeues the job as preemption does: back to PENDING, restart count + 1. */
  public synchronized void requeue(long jobId) {
    SlurmJob j = existing(jobId);
    put(withState(j, JobState.PENDING, "BeginTime", List.of(), j.restartCount() + 1));
  }

  /** The job waits, for Slurm's {@code reason} (Resources, Priority…). */
  public synchronized void pend(long jobId, String reason) {
    SlurmJob j = existing(jobId);
    put(withState(j, JobState.PENDING, reason, List.of(), j.restartCount()));
  }

  /** Removes the job entirely, as slurmctld does after MinJobAge. */
  public synchronized void purge(long jobId) {
    jobs.remove(jobId);
    lastChange = clock.instant();
  }

  private SlurmJob withState(SlurmJob j, JobState s, String reason, List<String> on, int restarts) {
    Instant now = clock.instant();
    return new SlurmJob(
            j.id(),
            j.name(),
            j.comment(),
            s,
            reason,
            j.partition(),
            j.qos(),
            on,
            j.nodeCount(),
            j.submitTime(),
            s == JobState.RUNNING ? Optional.of(now) : j.startTime(),
            s.isFinal() ? Optional.of(now) : Optional.empty(),
            restarts,
            j.tresPerNode(),
            j.features(),
            j.priority(),
            now)
        .withUser(j.user());
  }

  private SlurmJob existing(long id) {
    SlurmJob j = jobs.get(id);
    if (j == null) {
      throw new SlurmNotFoundException("fake: no job " + id);
    }
    return j;
  }

  private void put(SlurmJob j) {
    jobs.put(j.id(), j);
    lastChange = clock.instant();
  }

  private final java.util.Set<Long> unansweredOnce = new java.util.HashSet<>();

  /** The next read of this job says there is none (slurmctld busy requeuing it, say). */
  public synchronized void notFoundOnce(long jobId) {
    unansweredOnce.add(jobId);
  }

  @Override
  public synchronized Optional<SlurmJob> job(long jobId) {
    check();
    jobCalls++;
    jobsRead.add(jobId);
    if (unansweredOnce.remove(jobId)) {
      return Optional.empty();
    }
    return Optional.ofNullable(jobs.get(jobId));
  }

  /** Batched state checks ({@code jobs/state}): one call however many ids. */
  public synchronized int stateCalls() {
    return stateCalls;
  }

  private int stateCalls;

  /** Ids asked about in state checks, in all. */
  public synchronized int stateIdsAsked() {
    return stateIdsAsked;
  }

  private int stateIdsAsked;

  @Override
  public synchronized java.util.Map<Long, JobState> jobStates(java.util.Collection<Long> ids) {
    check();
    if (version == ApiVersion.V0038) {
      throw new IllegalStateException("v0.0.38 has no jobs/state: the cache must not ask");
    }
    stateCalls++;
    stateIdsAsked += ids.size();
    java.util.Map<Long, JobState> out = new java.util.LinkedHashMap<>();
    for (long id : ids) {
      SlurmJob j = jobs.get(id);
      if (j != null) {
        out.put(id, j.state());
      }
    }
    return out;
  }

  /** Calls for every job's state ({@code jobs/state} without ids). */
  public synchronized int allStateCalls() {
    return allStateCalls;
  }

  private int allStateCalls;

  @Override
  public synchronized Optional<java.util.Map<Long, JobState>> allJobStates() {
    check();
    if (version == ApiVersion.V0038) {
      return Optional.empty();
    }
    allStateCalls++;
    java.util.Map<Long, JobState> out = new java.util.HashMap<>();
    jobs.values().forEach(j -> out.put(j.id(), j.state()));
    return Optional.of(out);
  }

  @Override
  public synchronized JobListing jobsChangedSince(Instant since) {
    check();
    listCalls++;
    if (!since.equals(Instant.EPOCH) && !lastChange.isAfter(since)) {
      return JobListing.unchanged(since);
    }
    // like RestSlurmClient: one second before what the listing covers
    return new JobListing(true, List.copyOf(jobs.values()), lastChange.minusSeconds(1));
  }

  @Override
  public synchronized void cancel(long jobId) {
    check();
    SlurmJob j = jobs.get(jobId);
    if (j != null && !j.state().isFinal()) {
      put(withState(j, JobState.CANCELLED, "None", j.nodes(), j.restartCount()));
    }
  }

  @Override
  public synchronized void update(long jobId, JobUpdate update) {
    check();
    SlurmJob j0 = existing(jobId);
    update
        .hold()
        .filter(h -> j0.state() == JobState.PENDING)
        .ifPresent(
            h ->
                put(
                    new SlurmJob(
                            j0.id(),
                            j0.name(),
                            j0.comment(),
                            j0.state(),
                            h ? "JobHeldUser" : "Priority",
                            j0.partition(),
                            j0.qos(),
                            j0.nodes(),
                            j0.nodeCount(),
                            j0.submitTime(),
                            j0.startTime(),
                            j0.endTime(),
                            j0.restartCount(),
                            j0.tresPerNode(),
                            j0.features(),
                            h ? 0 : 1000,
                            clock.instant())
                        .withUser(j0.user())));
    SlurmJob j = existing(jobId);
    update
        .comment()
        .ifPresent(
            c ->
                put(
                    new SlurmJob(
                            j.id(),
                            j.name(),
                            c,
                            j.state(),
                            j.stateReason(),
                            j.partition(),
                            j.qos(),
                            j.nodes(),
                            j.nodeCount(),
                            j.submitTime(),
                            j.startTime(),
                            j.endTime(),
                            j.restartCount(),
                            j.tresPerNode(),
                            j.features(),
                            j.priority(),
                            clock.instant())
                        .withUser(j.user())));
  }

  @Override
  public synchronized List<SlurmNode> nodes() {
    check();
    return List.copyOf(nodes.values());
  }

  private int nodeReads;
  private int nodeListingAsks;

  /** {@code GET node/NAME} calls so far. */
  public synchronized int nodeReads() {
    return nodeReads;
  }

  /** Node listings asked for so far, whether the table came back or "unchanged". */
  public synchronized int nodeListingAsks() {
    return nodeListingAsks;
  }

  @Override
  public synchronized Optional<SlurmNode> node(String name) {
    check();
    nodeReads++;
    return Optional.ofNullable(nodes.get(name));
  }

  /** Node tables listed so far (an unchanged answer is not one). */
  public synchronized int nodeTableCalls() {
    return nodeTableCalls;
  }

  private int nodeTableCalls;
  private Instant lastNodeChange = Instant.EPOCH;

  @Override
  public synchronized io.kse.slurm.NodeListing nodesChangedSince(Instant since) {
    check();
    nodeListingAsks++;
    duringNodeListing.run();
    if (!since.equals(Instant.EPOCH) && !lastNodeChange.isAfter(since)) {
      return io.kse.slurm.NodeListing.unchanged(since);
    }
    nodeTableCalls++;
    Instant asOf = (lastNodeChange.isAfter(Instant.EPOCH) ? lastNodeChange : clock.instant());
    return new io.kse.slurm.NodeListing(true, List.copyOf(nodes.values()), asOf.minusSeconds(1));
  }

  private final List<io.kse.slurm.SlurmPartition> partitions =
      new ArrayList<>(
          List.of(
              new io.kse.slurm.SlurmPartition(
                  "inference", 10, Optional.of("OFF"), java.time.Duration.ZERO),
              new io.kse.slurm.SlurmPartition(
                  "training", 1, Optional.of("REQUEUE"), java.time.Duration.ZERO)));
  private final List<io.kse.slurm.SlurmQos> qos = new ArrayList<>();

  /** Replaces the QoS definitions the fake reports. */
  public synchronized void setQos(List<io.kse.slurm.SlurmQos> q) {
    qos.clear();
    qos.addAll(q);
  }

  @Override
  public synchronized List<io.kse.slurm.SlurmPartition> partitions() {
    check();
    return List.copyOf(partitions);
  }

  @Override
  public synchronized List<io.kse.slurm.SlurmQos> qos() {
    check();
    return List.copyOf(qos);
  }

  @Override
  public synchronized void drain(String node, String reason) {
    check();
    SlurmNode n = nodes.get(node);
    if (n == null) {
      throw new SlurmNotFoundException("fake: no node " + node);
    }
    nodes.put(node, node(node, n.state(), Set.of("DRAIN"), reason));
    lastNodeChange = clock.instant();
  }

  @Override
  public synchronized void resume(String node) {
    check();
    SlurmNode n = nodes.get(node);
    if (n == null) {
      throw new SlurmNotFoundException("fake: no node " + node);
    }
    nodes.put(node, node(node, "idle", Set.of(), ""));
    lastNodeChange = clock.instant();
  }

  /** The node as slurmctld sees it now, e.g. {@code down}, or {@code idle} + NOT_RESPONDING. */
  public synchronized void setNodeState(String node, String state, Set<String> flags) {
    SlurmNode n = nodes.get(node);
    nodes.put(node, node(node, state, flags, n.reason()));
    lastNodeChange = clock.instant();
  }

  @Override
  public synchronized void ping() {
    check();
  }

  /** A convenience for tests of outages. */
  /** {@code j} as Slurm shows it once chosen for preemption at {@code at} (within its grace). */
  public static SlurmJob preemptedAt(SlurmJob j, Instant at) {
    return new SlurmJob(
        j.id(),
        j.name(),
        j.comment(),
        j.state(),
        j.stateReason(),
        j.partition(),
        j.qos(),
        j.nodes(),
        j.nodeCount(),
        j.submitTime(),
        j.startTime(),
        j.endTime(),
        j.restartCount(),
        j.tresPerNode(),
        j.features(),
        j.priority(),
        at.isAfter(j.lastChange()) ? at : j.lastChange(),
        java.util.Optional.of(at),
        j.gresDetail(),
        j.user(),
        j.timeLimit());
  }

  public static SlurmUnavailableException outage() {
    return new SlurmUnavailableException("fake: slurmrestd is down");
  }
}
