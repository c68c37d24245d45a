package io.kse.policy.cli;

import io.kse.policy.Contribution;
import io.kse.policy.Decision;
import io.kse.policy.GroupFacts;
import io.kse.policy.GroupManifest;
import io.kse.policy.JobSpec;
import io.kse.policy.PlacementPolicy;
import io.kse.policy.PodFacts;
import io.kse.policy.PodManifest;
import io.kse.policy.PolicyParser;
import io.kse.policy.PolicyValidationException;
import io.kse.policy.PreemptionLedger;
import io.kse.policy.PreemptionPlanner;
import io.kse.policy.SlurmRenderer;
import io.kse.policy.model.Policy;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code kse-policy}: the SRE's tool for a policy repository. Exit codes: 0 fine, 1 the policy is
 * invalid or the pod is rejected, 2 wrong usage or unreadable input.
 */
@Command(
    name = "kse-policy",
    mixinStandardHelpOptions = true,
    version = "kse-policy 0.1.0",
    description = "Validate, explain and render kube-slurm-extender placement policies.",
    subcommands = {
      PolicyCli.Validate.class,
      PolicyCli.Explain.class,
      PolicyCli.RenderSlurm.class,
      PolicyCli.TraceCommand.class,
      RecordCommand.class,
      ReplayCommand.class
    })
public final class PolicyCli {
  public static final int OK = 0;
  public static final int INVALID = 1;
  public static final int USAGE = 2;

  public static void main(String[] args) {
    System.exit(run(new PrintWriter(System.out, true), new PrintWriter(System.err, true), args));
  }

  /** Runs the CLI with the given streams; returns the exit code. */
  public static int run(PrintWriter out, PrintWriter err, String... args) {
    CommandLine cl = new CommandLine(new PolicyCli());
    cl.setOut(out);
    cl.setErr(err);
    cl.setExitCodeExceptionMapper(e -> USAGE);
    cl.setExecutionExceptionHandler(
        (e, c, parsed) -> {
          c.getErr().println("error: " + e.getMessage());
          return USAGE;
        });
    if (args.length == 0) {
      cl.usage(err);
      return USAGE;
    }
    int code = cl.execute(args);
    out.flush();
    err.flush();
    return code;
  }

  static String read(Path p) {
    return io.kse.policy.load.PolicyFile.read(p, "file");
  }

  @Command(
      name = "validate",
      description = "Check policy files; print every problem with its path.")
  static final class Validate implements Callable<Integer> {
    @CommandLine.Spec CommandLine.Model.CommandSpec spec;

    @Parameters(arity = "1..*", paramLabel = "FILE")
    List<Path> files;

    @Override
    public Integer call() {
      int code = OK;
      for (Path f : files) {
        try {
          Policy p = PolicyParser.parse(read(f), f.toString());
          spec.commandLine()
              .getOut()
              .printf("%s: valid (%d tiers, default %s)%n", f, p.tiers().size(), p.defaultTier());
          for (io.kse.policy.model.Tier t : p.tiers()) {
            if (t.match().isPresent() || t.name().equals(p.defaultTier())) {
              spec.commandLine().getOut().printf("  tier %s: %s%n", t.name(), gpuOwnership(t));
            }
          }
        } catch (PolicyValidationException e) {
          code = INVALID;
          for (String problem : e.problems()) {
            spec.commandLine().getErr().printf("%s: %s%n", f, problem);
          }
        } catch (IllegalArgumentException e) { // too large, not UTF-8, unreadable
          code = INVALID;
          spec.commandLine().getErr().printf("%s: %s%n", f, e.getMessage());
        }
      }
      return code;
    }
  }

  /** One line on how a tier's pods own their GPUs (docs/gpu-ownership.md). */
  static String gpuOwnership(io.kse.policy.model.Tier t) {
    String dra = "DRA claims get the GPUs Slurm allocates, part of a node allowed; ";
    if (t.slurm().exclusive()) {
      return dra + "every placeholder holds its nodes whole (slurm.exclusive)";
    }
    if (t.riskGpuOverlapWithSlurmJobs()) {
      return dra
          + "device-plugin pods may take part of a node (riskGpuOverlapWithSlurmJobs: declared"
          + " unshared; safe only if these nodes never run Slurm jobs beside pods)";
    }
    return dra + "device-plugin pods get whole nodes";
  }

  @Command(
      name = "explain",
      description =
          "Show the decision for a pod manifest, and with --jobs what it could preempt. Several"
              + " pod manifests (leader first), or one LeaderWorkerSet manifest, are a group: one"
              + " job for all of them.")
  static final class Explain implements Callable<Integer> {
    @CommandLine.Spec CommandLine.Model.CommandSpec spec;

    @Option(names = "--policy", required = true, paramLabel = "FILE")
    Path policy;

    @Option(
        names = "--jobs",
        paramLabel = "JOBS.json",
        description = "a saved slurmrestd GET /jobs answer")
    Path jobs;

    @Option(
        names = "--now",
        paramLabel = "ISO-8601",
        description = "the time to judge runtimes at (default: now)")
    Instant now;

    @Option(
        names = "--claim-gpus",
        paramLabel = "N",
        description =
            "GPUs the pod asks through DRA ResourceClaims (the extender reads this from the pod's"
                + " ResourceClaimTemplates; this command cannot)")
    Long claimGpus;

    @Option(
        names = "--claim-shares",
        paramLabel = "K",
        description =
            "shares of one GPU the pod asks through a ResourceClaim (docs/gpu-sharing.md; the"
                + " extender reads this from the claim's capacity request)")
    Long claimShares;

    @Option(
        names = "--claim-mig",
        paramLabel = "PROFILE=N",
        description =
            "MIG devices of a profile the pod asks through a ResourceClaim, e.g. 1g.10gb=1"
                + " (docs/gpu-sharing.md; the extender reads this from the claim's selector)")
    java.util.Map<String, Long> claimMig;

    @Parameters(arity = "1..*", paramLabel = "POD")
    List<Path> pods;

    @Override
    public Integer call() {
      PrintWriter out = spec.commandLine().getOut();
      Policy p;
      try {
        p = PolicyParser.parse(read(policy), policy.toString());
      } catch (PolicyValidationException e) {
        spec.commandLine().getErr().println(e.getMessage());
        return INVALID;
      }
      Instant at = now == null ? Instant.now() : now;
      PreemptionLedger ledger = new PreemptionLedger();
      Decision d;
      String first = read(pods.get(0));
      if (pods.size() > 1 || GroupManifest.isLeaderWorkerSet(first)) {
        GroupFacts g =
            pods.size() == 1
                ? GroupManifest.leaderWorkerSet(first)
                : GroupManifest.pods(pods.stream().map(f -> PodManifest.parse(read(f))).toList());
        d = new PlacementPolicy(p).decideGroup(g, ledger, at);
        out.printf("group %s (%s), %d members: tier %s%n", g.id(), g.source(), g.size(), d.tier());
        for (int i = 0; i < g.members().size(); i++) {
          out.printf("  member %d: %s%n", i, g.members().get(i).ref());
        }
      } else {
        PodFacts facts = PodManifest.parse(first);
        if (claimGpus != null) {
          facts = facts.withDraGpus(claimGpus);
        }
        if (claimShares != null) {
          facts = facts.withDraGpuShares(claimShares);
        }
        if (claimMig != null) {
          facts = facts.withDraMigDevices(claimMig);
        }
        if (claimGpus == null
            && claimShares == null
            && claimMig == null
            && first.contains("resourceClaims")) {
          out.println(
              "note: the pod has ResourceClaims; give --claim-gpus N (or --claim-shares K, or"
                  + " --claim-mig PROFILE=N) for what they ask, or its GPU ownership mode is judged"
                  + " without them");
        }
        d = new PlacementPolicy(p).decide(facts, ledger, at);
        out.printf("pod %s: tier %s%n", facts.ref(), d.tier());
      }
      for (Contribution c : d.record()) {
        out.printf("  %s%n", c);
      }
      if (d instanceof Decision.Reject r) {
        out.printf("REJECTED: %s%n", r.reason());
        return INVALID;
      }
      JobSpec j = ((Decision.Place) d).job();
      out.printf("placeholder job: %s%n", describe(j));
      if (jobs != null) {
        out.printf("running jobs (from %s):%n", jobs);
        for (PreemptionPlanner.Verdict v :
            new PreemptionPlanner(p).plan(d.tier(), JobSnapshot.parse(read(jobs)), ledger, at)) {
          out.printf(
              "  %-12s job %d %s (tier %s, %d GPUs, %d nodes): %s%n",
              v.preemptible() ? "PREEMPTIBLE" : "protected",
              v.job().id(),
              v.job().name(),
              v.tier(),
              v.job().gpus(),
              v.job().nodes(),
              v.reason());
        }
      }
      return OK;
    }

    private static String describe(JobSpec j) {
      StringBuilder s = new StringBuilder();
      j.partition().ifPresent(v -> s.append("partition=").append(v).append(' '));
      j.qos().ifPresent(v -> s.append("qos=").append(v).append(' '));
      j.account().ifPresent(v -> s.append("account=").append(v).append(' '));
      s.append("nodes=").append(j.nodes()).append(" cpusPerNode=").append(j.cpusPerNode());
      s.append(" memoryPerNodeMb=").append(j.memoryPerNodeMb());
      j.gresPerNode().ifPresent(v -> s.append(" gres=").append(v));
      j.timeLimitMinutes().ifPresent(v -> s.append(" timeLimit=").append(v).append('m'));
      j.constraint().ifPresent(v -> s.append(" constraint=").append(v));
      if (!(j.topology() instanceof io.kse.policy.TopologyRequest.None)) {
        s.append(" topology=").append(j.topology());
      }
      j.priority().ifPresent(v -> s.append(" priority=").append(v));
      j.nice().ifPresent(v -> s.append(" nice=").append(v));
      if (j.exclusive()) {
        s.append(" exclusive");
      }
      s.append(j.preempting() ? " (may preempt)" : " (does not preempt)");
      return s.toString();
    }
  }

  @Command(
      name = "render-slurm",
      description = "Print the Slurm partitions or QoS definitions that match the policy.")
  static final class RenderSlurm implements Callable<Integer> {
    @CommandLine.Spec CommandLine.Model.CommandSpec spec;

    @Option(
        names = "--nodes",
        defaultValue = "ALL",
        paramLabel = "HOSTLIST",
        description = "node list for partitions (default ALL)")
    String nodes;

    @Option(
        names = "--tpu-slices",
        paramLabel = "TYPE:TOPOLOGY:COUNT[,...]",
        description =
            "also the TPU hosts of this layout (docs/tpu.md): node lines, gres.conf, one"
                + " topology/block block per slice and each host's Kubernetes labels")
    String tpuSlices;

    @Option(
        names = "--tpu-host-prefix",
        defaultValue = "tpu-host-",
        description = "TPU host names: PREFIX0, PREFIX1, ... (default tpu-host-)")
    String tpuHostPrefix;

    @Option(
        names = "--tpu-devices",
        defaultValue = "/dev/accel[0-3]",
        description = "the chips' device files on each host (default /dev/accel[0-3])")
    String tpuDevices;

    @Parameters(index = "0", paramLabel = "POLICY")
    Path policy;

    @Override
    public Integer call() {
      try {
        io.kse.policy.model.Policy p = PolicyParser.parse(read(policy), policy.toString());
        String tpu = "";
        if (tpuSlices != null) {
          try {
            tpu =
                "\n"
                    + io.kse.policy.TpuLayout.parse(p, tpuSlices).render(tpuHostPrefix, tpuDevices);
          } catch (IllegalArgumentException e) {
            spec.commandLine().getErr().println("error: --tpu-slices " + e.getMessage());
            return INVALID;
          }
        }
        spec.commandLine().getOut().print(SlurmRenderer.render(p, nodes) + tpu);
        return OK;
      } catch (PolicyValidationException e) {
        spec.commandLine().getErr().println(e.getMessage());
        return INVALID;
      }
    }
  }

  @Command(
      name = "trace",
      description =
          "Traces for policy replay (docs/policy-guide.md \"Replay\"): synth writes a seeded synthetic"
              + " trace, check reads one and summarizes it.",
      subcommands = {TraceCommand.Synth.class, TraceCommand.Check.class})
  static final class TraceCommand {
    @Command(
        name = "synth",
        description =
            "Write a synthetic trace (JSON lines) to stdout: inference with a daily rhythm, a"
                + " training mix.")
    static final class Synth implements Callable<Integer> {
      @CommandLine.Spec CommandLine.Model.CommandSpec spec;

      @Option(
          names = "--seed",
          defaultValue = "1",
          description = "the generator's seed (default 1)")
      long seed;

      @Option(
          names = "--hours",
          defaultValue = "24",
          description = "the trace's length in hours (default 24)")
      double hours;

      @Option(
          names = "--inference-per-hour",
          defaultValue = "60",
          description = "mean inference arrivals per hour (default 60)")
      double inferencePerHour;

      @Option(
          names = "--training-per-hour",
          defaultValue = "6",
          description = "mean training submissions per hour (default 6)")
      double trainingPerHour;

      @Override
      public Integer call() {
        if (!(hours > 0) || hours > 24 * 366) {
          throw new CommandLine.ParameterException(
              spec.commandLine(), "--hours must be more than 0 and at most a year, got " + hours);
        }
        var day = io.kse.policy.replay.SyntheticTraces.Shape.day();
        var shape =
            new io.kse.policy.replay.SyntheticTraces.Shape(
                java.time.Duration.ofMillis(Math.round(hours * 3_600_000)),
                inferencePerHour,
                day.diurnalAmplitude(),
                day.criticalShare(),
                day.inferenceNamespace(),
                trainingPerHour,
                day.trainingPartition());
        io.kse.policy.replay.TraceCodec.write(
            io.kse.policy.replay.SyntheticTraces.generate(shape, seed),
            spec.commandLine().getOut());
        return OK;
      }
    }

    @Command(
        name = "check",
        description = "Read a trace and summarize it; exit 1 naming the first problem.")
    static final class Check implements Callable<Integer> {
      @CommandLine.Spec CommandLine.Model.CommandSpec spec;

      @Parameters(index = "0", paramLabel = "TRACE")
      Path trace;

      @Override
      public Integer call() {
        try {
          var t = io.kse.policy.replay.TraceCodec.read(new java.io.StringReader(read(trace)));
          long gpuHours =
              Math.round(
                  t.slurmJobs().stream()
                      .mapToDouble(
                          j -> j.nodes() * j.gpusPerNode() * j.runtime().toMillis() / 3_600_000.0)
                      .sum());
          spec.commandLine()
              .getOut()
              .printf(
                  "%s: %s trace of %s from %s: %d inference arrivals, %d Slurm jobs (%d GPU-hours)%n",
                  trace,
                  t.header().source(),
                  t.header().length(),
                  t.header().start(),
                  t.inference().size(),
                  t.slurmJobs().size(),
                  gpuHours);
          return OK;
        } catch (io.kse.policy.replay.TraceCodec.TraceException e) {
          spec.commandLine().getErr().println(trace + ": " + e.getMessage());
          return INVALID;
        }
      }
    }
  }
}
