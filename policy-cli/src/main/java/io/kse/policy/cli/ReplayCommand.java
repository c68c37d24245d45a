package io.kse.policy.cli;

import io.kse.policy.Durations;
import io.kse.policy.PolicyParser;
import io.kse.policy.PolicyValidationException;
import io.kse.policy.cli.replay.PolicyReplay;
import io.kse.policy.cli.replay.ReplayHtml;
import io.kse.policy.cli.replay.ScratchSlurm;
import io.kse.policy.replay.TimeScale;
import io.kse.policy.replay.Trace;
import io.kse.policy.replay.TraceCodec;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code kse-policy replay}: what a candidate policy would have done to a trace, against a
 * baseline, on a scratch Slurm 26.05 this command starts (docs/policy-guide.md "Replay").
 */
@Command(
    name = "replay",
    description =
        "Replay a trace against a candidate policy (and a baseline, replayed twice to measure"
            + " noise) on a scratch Slurm 26.05 with external GPU nodes; print the side-by-side"
            + " report and write it as an HTML page.")
final class ReplayCommand implements Callable<Integer> {
  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Option(names = "--trace", required = true, description = "the trace (JSON lines)")
  Path trace;

  @Option(names = "--policy", required = true, description = "the candidate policy")
  Path candidate;

  @Option(names = "--baseline", description = "the policy in force today")
  Optional<Path> baseline;

  @Option(
      names = "--speed",
      defaultValue = "60",
      description = "trace seconds per wall second (default 60: an hour in a minute)")
  double speed;

  @Option(
      names = "--nodes",
      defaultValue = "32",
      description = "GPU nodes of the scratch cluster, 8 GPUs each (default 32)")
  int nodes;

  @Option(
      names = "--threshold",
      defaultValue = "5m",
      description = "waits longer than this are counted per tier (default 5m)")
  String threshold;

  @Option(
      names = "--html",
      defaultValue = "replay.html",
      description = "where the HTML report goes (default replay.html)")
  Path html;

  @Option(
      names = "--dir",
      defaultValue = "/tmp/kse-replay",
      description = "the scratch cluster's directory (default /tmp/kse-replay)")
  Path dir;

  @Option(
      names = "--port-offset",
      defaultValue = "0",
      description = "added to the scratch cluster's ports (16920, 17920…)")
  int portOffset;

  @Option(
      names = "--slurm-cluster",
      description = "testing/slurm/slurm-cluster of this repository (default: found from here)")
  Optional<Path> script;

  @Option(names = "--keep", description = "leave the scratch cluster running afterwards")
  boolean keep;

  @Override
  public Integer call() throws IOException {
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    Trace t;
    PolicyReplay.Named cand;
    Optional<PolicyReplay.Named> base;
    TimeScale scale;
    java.time.Duration over;
    try {
      t = TraceCodec.read(new java.io.StringReader(PolicyCli.read(trace)));
      cand = named(candidate);
      base = baseline.isPresent() ? Optional.of(named(baseline.get())) : Optional.empty();
      scale = new TimeScale(speed);
      over = Durations.parse(threshold);
    } catch (TraceCodec.TraceException e) {
      err.println(trace + ": " + e.getMessage());
      return PolicyCli.INVALID;
    } catch (PolicyValidationException e) {
      e.problems().forEach(err::println);
      return PolicyCli.INVALID;
    } catch (IllegalArgumentException e) {
      throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
    }
    Path cluster = script.orElseGet(ReplayCommand::findScript);
    ScratchSlurm slurm = ScratchSlurm.start(cluster, dir, nodes, portOffset);
    try {
      PolicyReplay.Result r =
          new PolicyReplay(slurm, scale, over, line -> err.println(line)).compare(t, cand, base);
      out.print(r.table());
      if (!r.callouts().isEmpty()) {
        out.println();
        r.callouts().forEach(c -> out.println("* " + c));
      }
      out.println();
      r.notes().forEach(n -> out.println("note: " + n));
      Files.writeString(
          html,
          ReplayHtml.page(
              "Policy replay of " + trace.getFileName(),
              r.table(),
              r.callouts(),
              r.notes(),
              r.runs(),
              (long) nodes * ScratchSlurm.GPUS_PER_NODE));
      out.println("HTML report: " + html.toAbsolutePath());
      return PolicyCli.OK;
    } finally {
      if (!keep) {
        slurm.close();
      }
    }
  }

  private static PolicyReplay.Named named(Path file) {
    try {
      return new PolicyReplay.Named(
          file.getFileName().toString(), PolicyParser.parse(PolicyCli.read(file), file.toString()));
    } catch (PolicyValidationException e) {
      throw new PolicyValidationException(
          file.toString(), e.problems().stream().map(p -> file + ": " + p).toList());
    }
  }

  /** testing/slurm/slurm-cluster in this directory or one above it. */
  static Path findScript() {
    for (Path d = Path.of("").toAbsolutePath(); d != null; d = d.getParent()) {
      Path s = d.resolve("testing/slurm/slurm-cluster");
      if (Files.isExecutable(s)) {
        return s;
      }
    }
    throw new IllegalArgumentException(
        "testing/slurm/slurm-cluster not found here or above: run from the repository's clone or"
            + " pass --slurm-cluster");
  }
}
