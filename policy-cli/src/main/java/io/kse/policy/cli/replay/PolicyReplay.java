package io.kse.policy.cli.replay;

import io.kse.policy.PlacementPolicy;
import io.kse.policy.model.Policy;
import io.kse.policy.replay.ReplayReport;
import io.kse.policy.replay.TimeScale;
import io.kse.policy.replay.Trace;
import io.kse.slurm.ApiVersion;
import io.kse.slurm.SlurmClient;
import io.kse.slurm.SlurmClients;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * A candidate policy against a baseline on one trace: the baseline replayed, the candidate, the
 * baseline again (the difference between the two baseline runs is the noise every call-out must
 * exceed), each on the same scratch Slurm with its partitions rendered from the policy replayed.
 */
public final class PolicyReplay {
  /** A policy to replay and the name the report gives it (its file's name). */
  public record Named(String name, Policy policy) {}

  /** Everything the terminal and the HTML page show. */
  public record Result(
      List<ReplayReport> reports,
      List<ReplayRun.Outcome> runs,
      String table,
      List<String> callouts,
      List<String> notes) {}

  private final ScratchSlurm cluster;
  private final TimeScale scale;
  private final Duration threshold;
  private final Consumer<String> log;

  public PolicyReplay(
      ScratchSlurm cluster, TimeScale scale, Duration threshold, Consumer<String> log) {
    this.cluster = cluster;
    this.scale = scale;
    this.threshold = threshold;
    this.log = log;
  }

  public Result compare(Trace trace, Named candidate, Optional<Named> baseline) {
    List<Named> order = new ArrayList<>();
    baseline.ifPresent(order::add);
    order.add(candidate);
    baseline.ifPresent(b -> order.add(new Named(b.name() + " (again)", b.policy())));
    List<String> notes = new ArrayList<>();
    notes.add(
        String.format(
            java.util.Locale.ROOT,
            "replayed at %.0f× on %d external GPU nodes of %d GPUs (Slurm 26.05); Slurm's state"
                + " read every %d ms, so times are exact to about %s of the trace",
            scale.speed(),
            cluster.nodes(),
            ScratchSlurm.GPUS_PER_NODE,
            ReplayRun.POLL.toMillis(),
            ReplayReport.seconds(scale.trace(ReplayRun.POLL))));
    notes.add(
        "not modelled: node failures, pods' own start-up, topology beyond NVLink-domain features"
            + " (external nodes share one switch), Slurm's backfill at the scratch cluster's"
            + " intervals (2 s main, 5 s backfill: not compressed)");
    List<ReplayRun.Outcome> runs = new ArrayList<>();
    List<ReplayReport> reports = new ArrayList<>();
    try (SlurmClient slurm =
        SlurmClients.connect(cluster.placeholderUser(), new SimpleMeterRegistry())) {
      var others = SlurmClients.http(cluster.otherUsers());
      String path = "/slurm/" + slurm.apiVersion().id();
      if (slurm.apiVersion() != ApiVersion.V0045) {
        throw new IllegalStateException(
            "a replay needs Slurm 26.05's external jobs (slurmrestd v0.0.45), found "
                + slurm.apiVersion().id());
      }
      for (Named p : order) {
        cluster.cancelAll();
        for (String floored : cluster.configure(p.policy(), scale)) {
          if (!notes.contains(floored)) {
            notes.add(floored);
          }
        }
        log.accept("[replay] replaying " + p.name());
        ReplayRun.Outcome o =
            new ReplayRun(slurm, others, path, scale, log)
                .run(trace, p.name(), new PlacementPolicy(p.policy()));
        runs.add(o);
        reports.add(
            ReplayReport.of(
                p.name(),
                o.arrivals(),
                o.preemptions(),
                o.budgetRefusals(),
                threshold,
                o.rejected().size()));
        o.rejected().stream()
            .limit(5)
            .forEach(r -> log.accept("[replay] " + p.name() + " refused " + r));
      }
      cluster.cancelAll();
    }
    List<String> callouts =
        reports.size() == 3
            ? ReplayReport.callouts(reports.get(0), reports.get(1), reports.get(2))
            : List.of();
    return new Result(reports, runs, ReplayReport.table(reports), callouts, notes);
  }
}
