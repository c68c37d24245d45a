package io.kse.policy.cli.replay;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kse.policy.Decision;
import io.kse.policy.GroupFacts;
import io.kse.policy.PlacementPolicy;
import io.kse.policy.PodFacts;
import io.kse.policy.PreemptionLedger;
import io.kse.policy.replay.ReplayReport;
import io.kse.policy.replay.TimeScale;
import io.kse.policy.replay.Trace;
import io.kse.slurm.JobState;
import io.kse.slurm.JobSubmission;
import io.kse.slurm.PlaceholderJobs;
import io.kse.slurm.PlaceholderTag;
import io.kse.slurm.SlurmClient;
import io.kse.slurm.SlurmException;
import io.kse.slurm.SlurmJob;
import io.kse.slurm.preemption.PreemptionTracker;
import io.kse.slurm.rest.SlurmHttp;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Consumer;

/**
 * One replay of a trace under one policy on a scratch Slurm, at compressed time: other users' jobs
 * are submitted as external jobs when the trace says, and cancelled once they have run their
 * runtime; each inference arrival goes through the real policy ({@link PlacementPolicy}, its ledger
 * on the trace's clock) and the real placeholder translation ({@link PlaceholderJobs}) and is
 * cancelled when its lifetime ends. Slurm makes every scheduling and preemption decision. Which
 * placeholder took a preempted training job's nodes is worked out by the extender's own {@link
 * PreemptionTracker}, fed the changes this replay sees, and charged unless the policy says that
 * tier may not preempt the job's ({@code Policy.chargeRefused}, as the extender asks); if the trace
 * says the job requeues, it is submitted again.
 */
public final class ReplayRun {
  /** How often Slurm's state is read, on the wall clock: the replay's time resolution. */
  static final Duration POLL = Duration.ofMillis(100);

  /** Where the GPUs were and how many inference arrivals waited, at one moment of the trace. */
  public record Sample(Duration at, long inferenceGpus, long trainingGpus, int waiting) {}

  /** What one replay did: the report's inputs and the time series the HTML page plots. */
  public record Outcome(
      String policy,
      List<ReplayReport.Arrival> arrivals,
      List<ReplayReport.Preemption> preemptions,
      Map<String, Integer> budgetRefusals,
      List<Sample> samples,
      List<String> rejected,
      int unattributed,
      int reruns) {}

  private final SlurmClient slurm;
  private final SlurmHttp others;
  private final String slurmPath;
  private final TimeScale scale;
  private final Consumer<String> log;

  /**
   * @param slurm the placeholders' client (our Slurm user)
   * @param others other users' jobs are submitted through this (root's token)
   * @param slurmPath slurmrestd's API of the scratch cluster's version, e.g. {@code /slurm/v0.0.45}
   */
  public ReplayRun(
      SlurmClient slurm,
      SlurmHttp others,
      String slurmPath,
      TimeScale scale,
      Consumer<String> log) {
    this.slurm = slurm;
    this.others = others;
    this.slurmPath = slurmPath;
    this.scale = scale;
    this.log = log;
  }

  /** Our placeholders as last seen, for their order in Slurm's queue (the extender's cache). */
  private volatile io.kse.slurm.cache.Snapshot lastSeen =
      new io.kse.slurm.cache.Snapshot(Map.of(), Map.of(), Map.of(), Map.of(), Instant.EPOCH);

  /** One of ours waits in Slurm's queue per partition, as in the extender (issue 60). */
  private final io.kse.slurm.SubmissionOrder order =
      new io.kse.slurm.SubmissionOrder(() -> lastSeen, java.time.Clock.systemUTC());

  /** An inference arrival's course through the replay. */
  private static final class Arrival {
    final Trace.Inference spec;
    String tier = "";
    long job;
    Optional<Duration> waited = Optional.empty();
    List<String> nodes = List.of();
    Duration allocatedAt;
    boolean done;

    Arrival(Trace.Inference spec) {
      this.spec = spec;
    }

    Duration deadline() {
      return spec.at().plus(spec.lifetime());
    }
  }

  /** Another user's job, through preemptions and reruns. */
  private static final class Training {
    final Trace.SlurmJob spec;
    long job;
    Duration startedAt;
    List<String> nodes = List.of();
    boolean done;

    Training(Trace.SlurmJob spec) {
      this.spec = spec;
    }
  }

  public Outcome run(Trace trace, String name, PlacementPolicy policy) {
    PreemptionLedger ledger = new PreemptionLedger();
    Instant traceStart = trace.header().start();
    List<Arrival> arrivals = trace.inference().stream().map(Arrival::new).toList();
    List<Training> training = trace.slurmJobs().stream().map(Training::new).toList();
    Map<String, Integer> refusals = new TreeMap<>();
    List<String> rejected = new ArrayList<>();
    List<Sample> samples = new ArrayList<>();
    Set<Long> ours = new HashSet<>();
    int reruns = 0;
    ReplayAttribution attribution = new ReplayAttribution(policy.policy(), ledger, traceStart);
    Duration end =
        arrivals.stream()
            .map(Arrival::deadline)
            .reduce(trace.header().length(), (a, b) -> a.compareTo(b) >= 0 ? a : b);
    int nextArrival = 0;
    int nextTraining = 0;
    long wall0 = System.nanoTime();
    Duration lastSample = Duration.ofSeconds(-1_000_000);
    Duration sampleEvery = scale.trace(Duration.ofSeconds(1));
    while (true) {
      Duration now = scale.trace(Duration.ofNanos(System.nanoTime() - wall0));
      if (now.compareTo(end) > 0) {
        break;
      }
      while (nextTraining < training.size()
          && training.get(nextTraining).spec.at().compareTo(now) <= 0) {
        Training t = training.get(nextTraining++);
        t.job = submitTraining(t.spec);
        ours.add(t.job);
        attribution.training(t.job, t.spec);
      }
      while (nextArrival < arrivals.size()
          && arrivals.get(nextArrival).spec.at().compareTo(now) <= 0) {
        Arrival a = arrivals.get(nextArrival++);
        place(a, policy, ledger, traceStart.plus(now), refusals, rejected);
        if (a.job > 0) {
          ours.add(a.job);
          attribution.placeholder(a.job, a.tier);
        }
      }
      Map<Long, SlurmJob> jobs = new LinkedHashMap<>();
      Instant wallNow = Instant.now();
      for (SlurmJob j : slurm.allJobs(j -> ours.contains(j.id()))) {
        jobs.put(j.id(), j);
        attribution.observe(j, wallNow, now);
      }
      lastSeen =
          new io.kse.slurm.cache.Snapshot(Map.copyOf(jobs), Map.of(), Map.of(), Map.of(), wallNow);
      keepOrder(jobs.values());
      for (Arrival a : arrivals) {
        if (a.done || a.job == 0) {
          continue;
        }
        SlurmJob j = jobs.get(a.job);
        if (j != null && a.waited.isEmpty() && j.state() == JobState.RUNNING) {
          a.waited = Optional.of(now.minus(a.spec.at()));
          a.allocatedAt = now;
          a.nodes = j.nodes();
        }
        if (now.compareTo(a.deadline()) >= 0) {
          cancel(a.job);
          a.done = true;
        } else if (j != null && j.state().isFinal()) {
          a.done = true; // preempted by a higher tier, or failed: the pod would wait again
        }
      }
      for (Training t : training) {
        if (t.done || t.job == 0) {
          continue;
        }
        SlurmJob j = jobs.get(t.job);
        if (j == null) {
          continue;
        }
        if (j.state() == JobState.RUNNING && t.startedAt == null) {
          t.startedAt = now;
          t.nodes = j.nodes();
        }
        if (t.startedAt != null
            && j.state() == JobState.RUNNING
            && now.minus(t.startedAt).compareTo(t.spec.runtime()) >= 0) {
          cancelTraining(t.job);
          t.done = true;
        } else if (j.state().isFinal()) {
          if (j.state() == JobState.PREEMPTED && t.spec.requeue()) {
            t.job = submitTraining(t.spec);
            ours.add(t.job);
            attribution.training(t.job, t.spec);
            t.startedAt = null;
            reruns++;
          } else {
            t.done = true;
          }
        }
      }
      if (now.minus(lastSample).compareTo(sampleEvery) >= 0) {
        samples.add(sample(now, arrivals, training, jobs));
        lastSample = now;
      }
      sleep(POLL);
    }
    for (Training t : training) {
      if (!t.done && t.job != 0) {
        cancelTraining(t.job);
      }
    }
    // the victims still waiting for a placeholder when the trace ended: lost work all the same
    attribution.finish();
    log.accept(
        "[replay] "
            + name
            + ": "
            + arrivals.size()
            + " arrivals, "
            + training.size()
            + " training jobs, "
            + attribution.preemptions().size()
            + " preemptions in "
            + Duration.ofNanos(System.nanoTime() - wall0).toSeconds()
            + " s");
    List<ReplayReport.Arrival> out = new ArrayList<>();
    for (Arrival a : arrivals) {
      if (a.job > 0) {
        out.add(new ReplayReport.Arrival(a.spec.id(), a.tier, a.waited));
      }
    }
    return new Outcome(
        name,
        out,
        attribution.preemptions(),
        refusals,
        samples,
        rejected,
        attribution.unattributed(),
        reruns);
  }

  private Sample sample(
      Duration now, List<Arrival> arrivals, List<Training> training, Map<Long, SlurmJob> jobs) {
    long inference = 0;
    int waiting = 0;
    for (Arrival a : arrivals) {
      if (a.done || a.spec.at().compareTo(now) > 0 || a.job == 0) {
        continue;
      }
      SlurmJob j = jobs.get(a.job);
      if (j != null && j.state() == JobState.RUNNING) {
        inference += a.spec.gpus() * a.spec.nodes();
      } else if (a.waited.isEmpty()) {
        waiting++;
      }
    }
    long busy = 0;
    for (Training t : training) {
      SlurmJob j = t.done ? null : jobs.get(t.job);
      if (j != null && j.state() == JobState.RUNNING) {
        busy += (long) t.spec.gpusPerNode() * t.spec.nodes();
      }
    }
    return new Sample(now, inference, busy, waiting);
  }

  /** Holds and releases our pending placeholders by the extender's rule (SubmissionOrder.turn). */
  private void keepOrder(java.util.Collection<SlurmJob> ours) {
    for (SlurmJob j : ours) {
      io.kse.slurm.SubmissionOrder.Turn turn =
          io.kse.slurm.SubmissionOrder.turn(j, order.leader(j.partition(), j.id()));
      try {
        if (turn == io.kse.slurm.SubmissionOrder.Turn.RELEASE) {
          slurm.update(j.id(), order.release(j.id()));
        } else if (turn == io.kse.slurm.SubmissionOrder.Turn.HOLD) {
          slurm.update(j.id(), io.kse.slurm.JobUpdate.holding());
        }
      } catch (SlurmException e) {
        log.accept("[replay] could not " + turn + " job " + j.id() + ": " + e.getMessage());
      }
    }
  }

  /** The policy decides, the bridge's translation submits: as the extender does for a pod. */
  private void place(
      Arrival a,
      PlacementPolicy policy,
      PreemptionLedger ledger,
      Instant now,
      Map<String, Integer> refusals,
      List<String> rejected) {
    Trace.Inference in = a.spec;
    // a Kubernetes name: a recorded id may carry a '#2' for a recreated pod
    String podName =
        in.id()
            .substring(in.id().indexOf('/') + 1)
            .toLowerCase(java.util.Locale.ROOT)
            .replaceAll("[^a-z0-9.-]", "-");
    List<PodFacts> members = new ArrayList<>();
    for (int i = 0; i < in.nodes(); i++) {
      members.add(
          facts(
              in,
              i == 0 ? podName : podName + "-" + i,
              "replay-" + Integer.toUnsignedString(in.id().hashCode(), 36) + "-" + i));
    }
    Decision d =
        in.nodes() == 1
            ? policy.decide(members.get(0), ledger, now)
            : policy.decideGroup(
                new GroupFacts(
                    podName, "replay", in.nodes(), members, Optional.empty(), false, Set.of()),
                ledger,
                now);
    a.tier = d.tier();
    if (d instanceof Decision.Reject r) {
      rejected.add(in.id() + ": " + r.reason());
      return;
    }
    Decision.Place p = (Decision.Place) d;
    boolean mayPreempt =
        policy.policy().tier(p.tier()).map(t -> !t.mayPreempt().isEmpty()).orElse(false);
    if (mayPreempt && !p.job().preempting()) {
      refusals.merge(p.tier(), 1, Integer::sum);
    }
    PlaceholderTag tag;
    try {
      // an arrival of several nodes is a group, as a LeaderWorkerSet's pods are
      tag =
          PlaceholderTag.of(
              in.namespace(),
              podName,
              members.get(0).uid(),
              in.nodes() == 1 ? Optional.empty() : Optional.of(podName),
              in.nodes());
    } catch (IllegalArgumentException e) {
      rejected.add(in.id() + ": " + e.getMessage());
      return;
    }
    JobSubmission s =
        PlaceholderJobs.of(tag, p.job(), "/tmp", JobSubmission.Shape.EXTERNAL, Set.of());
    try {
      a.job = order.submit(s, slurm).jobId();
    } catch (SlurmException e) {
      rejected.add(in.id() + ": Slurm refused the placeholder: " + e.getMessage());
    }
  }

  private static PodFacts facts(Trace.Inference in, String name, String uid) {
    return new PodFacts(
        in.namespace(),
        name,
        uid,
        in.labels(),
        in.annotations(),
        in.priorityClassName(),
        OptionalInt.empty(),
        Optional.empty(),
        1000,
        1L << 30,
        Map.of(PodFacts.GPU, in.gpus()),
        OptionalLong.empty());
  }

  /** Another user's external job, its size and partition (and QoS) as the trace says. */
  private long submitTraining(Trace.SlurmJob t) {
    ObjectNode job = JsonNodeFactory.instance.objectNode();
    job.put("name", "replay-" + t.id());
    job.put("partition", t.partition());
    t.qos().ifPresent(q -> job.put("qos", q));
    job.put("nodes", Integer.toString(t.nodes()));
    job.put("tasks", t.nodes());
    job.put("tasks_per_node", 1);
    job.put("cpus_per_task", 1);
    job.put("tres_per_node", "gres/gpu:" + t.gpusPerNode());
    job.putArray("flags").add("EXTERNAL_JOB");
    job.put("current_working_directory", "/tmp");
    job.putArray("environment").add("PATH=/usr/bin:/bin");
    ObjectNode body = JsonNodeFactory.instance.objectNode();
    body.set("job", job);
    try {
      return others
          .post("submit " + t.id(), slurmPath + "/job/submit", body)
          .body()
          .path("job_id")
          .asLong();
    } catch (SlurmException e) {
      log.accept("[replay] Slurm refused training job " + t.id() + ": " + e.getMessage());
      return 0;
    }
  }

  private void cancel(long job) {
    try {
      slurm.cancel(job);
    } catch (SlurmException e) {
      log.accept("[replay] cancel of job " + job + " failed: " + e.getMessage());
    }
  }

  /** Other users' jobs are cancelled with their token: our Slurm user may not. */
  private void cancelTraining(long job) {
    try {
      others.delete("cancel " + job, slurmPath + "/job/" + job);
    } catch (SlurmException e) {
      log.accept("[replay] cancel of training job " + job + " failed: " + e.getMessage());
    }
  }

  private static void sleep(Duration d) {
    try {
      Thread.sleep(d.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("replay interrupted", e);
    }
  }
}
