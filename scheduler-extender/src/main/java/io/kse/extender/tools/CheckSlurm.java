package io.kse.extender.tools;

import io.kse.policy.PolicyParser;
import io.kse.policy.PolicyValidationException;
import io.kse.policy.drift.LivePartition;
import io.kse.policy.drift.LiveQos;
import io.kse.policy.drift.SlurmDrift;
import io.kse.policy.drift.TopologyDrift;
import io.kse.policy.model.ClusterSpec;
import io.kse.policy.model.Policy;
import io.kse.slurm.SlurmClient;
import io.kse.slurm.SlurmClients;
import io.kse.slurm.SlurmConfig;
import io.kse.slurm.SlurmException;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code check-slurm}: compares a placement policy with the live Slurm configuration (partitions,
 * and QoS from slurmdbd) through slurmrestd, and lists every difference. Reads the {@code
 * KSE_SLURM_*} variables. Exit codes: 0 they agree, 1 differences, 2 unusable input or Slurm
 * unreachable.
 */
@Command(
    name = "check-slurm",
    mixinStandardHelpOptions = true,
    description = "List where the live Slurm configuration disagrees with a placement policy.")
public final class CheckSlurm implements Callable<Integer> {
  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Option(names = "--policy", required = true, paramLabel = "FILE")
  Path policyFile;

  @Option(
      names = "--kubernetes",
      description =
          "also compare the nodes' topology labels in Kubernetes (the kubeconfig or in-cluster"
              + " account in use; needs to list nodes) with Slurm's features and GRES")
  boolean kubernetes;

  private final Map<String, String> env;

  public CheckSlurm(Map<String, String> env) {
    this.env = env;
  }

  /**
   * slurmrestd serves no slurm.conf, so the settings the GPU hold rests on cannot be compared: the
   * operator is told which to read and what they must say, every run.
   */
  static final String BY_HAND =
      "note: not served by slurmrestd, check on a Slurm host with `scontrol show config | grep -E"
          + " '^(Epilog|EpilogTimeout|PrologEpilogTimeout|ReturnToService) '`: Epilog runs"
          + " kse-node-epilog, its timeout is above the hook's HOLD_MAX_S, ReturnToService=1"
          + " (docs/install.md, The hold)";

  public static void main(String[] args) {
    System.exit(
        run(
            System.getenv(),
            new PrintWriter(System.out, true),
            new PrintWriter(System.err, true),
            args));
  }

  public static int run(Map<String, String> env, PrintWriter out, PrintWriter err, String... args) {
    return Commands.run(new CheckSlurm(env), out, err, args);
  }

  @Override
  public Integer call() {
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    Policy policy;
    try {
      policy = PolicyParser.parse(Files.readString(policyFile), policyFile.toString());
    } catch (IOException e) {
      err.println("error: cannot read " + policyFile + ": " + e.getMessage());
      return 2;
    } catch (PolicyValidationException e) {
      err.println(e.getMessage());
      return 2;
    }
    SlurmConfig config;
    try {
      config = SlurmConfig.fromEnv(env);
    } catch (IllegalArgumentException e) {
      err.println("error: " + e.getMessage());
      return 2;
    }
    try (SlurmClient slurm = SlurmClients.connect(config, new SimpleMeterRegistry())) {
      List<LivePartition> parts =
          slurm.partitions().stream()
              .map(
                  p ->
                      new LivePartition(p.name(), p.priorityTier(), p.preemptMode(), p.graceTime()))
              .toList();
      Optional<List<LiveQos>> qos = Optional.empty();
      if (policy.cluster().preemptMode() == ClusterSpec.PreemptMode.QOS) {
        qos =
            Optional.of(
                slurm.qos().stream()
                    .map(
                        q ->
                            new LiveQos(
                                q.name(), q.preempts(), q.graceTime(), q.preemptExemptTime()))
                    .toList());
      }
      List<String> diffs = new java.util.ArrayList<>(SlurmDrift.differences(policy, parts, qos));
      if (policy.cluster().gpuShares().isPresent()) {
        diffs.addAll(
            io.kse.policy.drift.SharesDrift.differences(policy.cluster(), slurmSides(slurm)));
        slurm
            .release()
            .filter(r -> !r.keepsShardsApart())
            .ifPresent(
                r ->
                    diffs.add(
                        "cluster.gpuShares: Slurm "
                            + r
                            + " can give a GPU whole while another job holds shards of it"
                            + " (SchedMD bug 19110, fixed in "
                            + io.kse.slurm.SlurmRelease.SHARDS_KEPT_APART
                            + "): the extender refuses pods asking part of a GPU there"));
      }
      if (!policy.cluster().migProfiles().isEmpty()) {
        diffs.addAll(io.kse.policy.drift.MigDrift.differences(policy.cluster(), slurmSides(slurm)));
      }
      if (kubernetes) {
        diffs.addAll(topology(policy, slurm));
      }
      diffs.add(BY_HAND);
      List<String> real = diffs.stream().filter(d -> !d.startsWith("note: ")).toList();
      diffs.forEach(d -> out.println((d.startsWith("note: ") ? "" : "DIFF ") + d));
      out.printf(
          "%s vs %s (slurmrestd %s): %s%n",
          policyFile,
          config.url(),
          slurm.apiVersion().id(),
          real.isEmpty() ? "Slurm agrees with the policy" : real.size() + " difference(s)");
      return real.isEmpty() ? 0 : 1;
    } catch (SlurmException e) {
      err.println("error: " + e.getMessage());
      return 2;
    } catch (io.fabric8.kubernetes.client.KubernetesClientException e) {
      err.println("error: cannot list the Kubernetes nodes: " + e.getMessage());
      return 2;
    }
  }

  /** Where the nodes' topology labels disagree with Slurm ({@link TopologyDrift}). */
  private static List<TopologyDrift.SlurmSide> slurmSides(SlurmClient slurm) {
    return slurm.nodes().stream()
        .map(n -> new TopologyDrift.SlurmSide(n.name(), n.features(), n.gres()))
        .toList();
  }

  private static List<String> topology(Policy policy, SlurmClient slurm) {
    List<TopologyDrift.SlurmSide> s = slurmSides(slurm);
    try (io.fabric8.kubernetes.client.KubernetesClient kube =
        io.kse.extender.k8s.KubeClients.build()) {
      List<TopologyDrift.KubeSide> k =
          kube.nodes().list().getItems().stream()
              .map(
                  n -> {
                    Map<String, String> labels =
                        n.getMetadata().getLabels() == null
                            ? Map.of()
                            : n.getMetadata().getLabels();
                    // the Slurm node it is: its label, else its own name (as the extender maps)
                    String name =
                        labels.getOrDefault(
                            io.kse.extender.k8s.WellKnown.SLURM_NODE_LABEL,
                            n.getMetadata().getName());
                    return new TopologyDrift.KubeSide(name, labels);
                  })
              .toList();
      return TopologyDrift.differences(policy.cluster(), s, k);
    }
  }
}
