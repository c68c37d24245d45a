package io.kse.policy.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kse.policy.PolicyParser;
import io.kse.policy.PolicyValidationException;
import io.kse.policy.cli.replay.TraceRecorder;
import io.kse.policy.model.Policy;
import io.kse.policy.replay.TraceCodec;
import io.kse.slurm.SlurmJob;
import io.kse.slurm.rest.SavedJobs;
import java.nio.file.Path;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code kse-policy record}: a replay trace from saved slurmrestd job listings and the API server's
 * pod listing (docs/policy-guide.md "Replay").
 */
@Command(
    name = "record",
    description =
        "Write a replay trace (JSON lines, stdout) from saved slurmrestd job listings (GET"
            + " .../jobs, several allowed: later ones win) and a pod listing (kubectl get pods -A -o"
            + " json); what it could not know goes to stderr.")
final class RecordCommand implements Callable<Integer> {
  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Option(names = "--jobs", required = true, description = "a saved slurmrestd jobs answer")
  List<Path> jobs;

  @Option(names = "--pods", description = "a saved pod listing (kubectl get pods -A -o json)")
  Optional<Path> pods;

  @Option(names = "--policy", description = "the policy in force during the period")
  Optional<Path> policy;

  @Option(names = "--from", description = "the period's start (ISO-8601; default: first submit)")
  Optional<String> from;

  @Option(names = "--to", description = "the period's end (ISO-8601; default: last event)")
  Optional<String> to;

  @Override
  public Integer call() {
    List<SlurmJob> all = new ArrayList<>();
    for (Path f : jobs) {
      try {
        all.addAll(SavedJobs.parse(PolicyCli.read(f)));
      } catch (IllegalArgumentException e) {
        spec.commandLine().getErr().println(f + ": " + e.getMessage());
        return PolicyCli.INVALID;
      }
    }
    List<JsonNode> items = new ArrayList<>();
    if (pods.isPresent()) {
      try {
        JsonNode list = new ObjectMapper().readTree(PolicyCli.read(pods.get()));
        if (list == null || !list.path("items").isArray()) {
          throw new IllegalArgumentException("expected a pod list with \"items\"");
        }
        list.path("items").forEach(items::add);
      } catch (Exception e) {
        spec.commandLine().getErr().println(pods.get() + ": " + e.getMessage());
        return PolicyCli.INVALID;
      }
    }
    Optional<Policy> p;
    try {
      p = policy.map(f -> PolicyParser.parse(PolicyCli.read(f), f.toString()));
    } catch (PolicyValidationException e) {
      e.problems().forEach(spec.commandLine().getErr()::println);
      return PolicyCli.INVALID;
    }
    TraceRecorder.Recorded r =
        TraceRecorder.record(all, items, p, instant("--from", from), instant("--to", to));
    TraceCodec.write(r.trace(), spec.commandLine().getOut());
    spec.commandLine()
        .getErr()
        .printf(
            "recorded %d inference arrivals and %d other jobs over %s%n",
            r.trace().inference().size(),
            r.trace().slurmJobs().size(),
            r.trace().header().length());
    r.notes().forEach(n -> spec.commandLine().getErr().println("note: " + n));
    return PolicyCli.OK;
  }

  private Optional<Instant> instant(String option, Optional<String> text) {
    try {
      return text.map(Instant::parse);
    } catch (DateTimeParseException e) {
      throw new CommandLine.ParameterException(
          spec.commandLine(), option + " expects an ISO-8601 instant, e.g. 2026-11-20T00:00:00Z");
    }
  }
}
