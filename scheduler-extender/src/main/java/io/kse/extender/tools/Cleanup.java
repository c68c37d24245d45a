package io.kse.extender.tools;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.kse.extender.ConfigSources;
import io.kse.extender.ExtenderConfig;
import io.kse.extender.NodeAdmins;
import io.kse.extender.k8s.ClusterIdentity;
import io.kse.extender.k8s.KubeClients;
import io.kse.slurm.PlaceholderOwner;
import io.kse.slurm.SlurmClient;
import io.kse.slurm.SlurmClients;
import io.kse.slurm.SlurmException;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code cleanup}: after an uninstall, lists what the extender left in Slurm and Kubernetes
 * (docs/uninstall.md) and, with {@code --apply}, removes it. Reads the extender's own settings
 * ({@code KSE_*}, or {@code --config}) and the kubeconfig. Exit codes: 0 nothing left (or all of it
 * removed), 1 leftovers listed, 2 unusable input, Slurm or Kubernetes unreachable, or the extender
 * still running.
 */
@Command(
    name = "cleanup",
    mixinStandardHelpOptions = true,
    description =
        "List what kube-slurm-extender left behind (placeholders, drains, taints, gates, Leases)"
            + " and, with --apply, remove it.")
public final class Cleanup implements Callable<Integer> {
  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Option(names = "--config", paramLabel = "FILE", description = "the extender's config file")
  Path configFile;

  @Option(names = "--apply", description = "remove what is listed")
  boolean apply;

  @Option(
      names = "--purge-ledger",
      description =
          "also delete the preemption ledger (kept by default: a reinstall carries it on)")
  boolean purgeLedger;

  @Option(
      names = "--force",
      description = "apply even while an extender holds a fresh writer Lease (it would fight back)")
  boolean force;

  private final Map<String, String> env;
  private final java.util.function.Supplier<KubernetesClient> kubeFactory;

  Cleanup(Map<String, String> env, java.util.function.Supplier<KubernetesClient> kubeFactory) {
    this.env = env;
    this.kubeFactory = kubeFactory;
  }

  public static int run(Map<String, String> env, PrintWriter out, PrintWriter err, String... args) {
    return Commands.run(new Cleanup(env, KubeClients::build), out, err, args);
  }

  @Override
  public Integer call() {
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    ExtenderConfig cfg;
    try {
      cfg = ExtenderConfig.fromEnv(ConfigSources.merge(Optional.ofNullable(configFile), env));
    } catch (IllegalArgumentException e) {
      err.println("error: " + e.getMessage());
      return 2;
    }
    try (KubernetesClient kube = kubeFactory.get();
        SlurmClient slurm = SlurmClients.connect(cfg.slurm(), new SimpleMeterRegistry())) {
      String cluster = ClusterIdentity.unresolved(cfg.clusterId()).resolve(kube);
      Leftovers.Where where =
          new Leftovers.Where(
              slurm,
              NodeAdmins.of(cfg, slurm),
              cfg.drainVia() != ExtenderConfig.DrainVia.OFF,
              new PlaceholderOwner(Optional.of(cluster), cfg.slurm().submittingUser()),
              kube,
              cfg.leaseNamespace(),
              cfg.leaseName());
      Instant now = Instant.now();
      List<Leftovers.Item> items = new ArrayList<>(Leftovers.find(where, now));
      List<String> held = Leftovers.held(where, now);
      held.forEach(h -> out.println("running: lease " + h + ": left alone"));
      Optional<Leftovers.Item> ledger = Leftovers.ledger(where);
      if (purgeLedger) {
        ledger.ifPresent(items::add);
      } else {
        ledger.ifPresent(
            l ->
                out.println("kept: " + l.kind() + " " + l.what() + " (--purge-ledger deletes it)"));
      }
      out.println(
          "Slurm's permanent node triggers are not visible through slurmrestd: as SlurmUser,"
              + " `strigger --get` lists them; `strigger --clear --id=N` removes those running"
              + " kse-allocation-hint. The hooks' lines in slurm.conf (PrologSlurmctld,"
              + " EpilogSlurmctld, Epilog) are yours to remove.");
      if (items.isEmpty()) {
        out.println("nothing left behind by the extender (cluster " + cluster + ")");
        return 0;
      }
      if (!apply) {
        items.forEach(i -> out.println("left: " + i));
        out.println(items.size() + " left behind; --apply removes them");
        return 1;
      }
      Optional<String> writer =
          held.stream()
              .filter(h -> h.startsWith(cfg.leaseNamespace() + "/" + cfg.leaseName() + " "))
              .findFirst();
      if (writer.isPresent() && !force) {
        err.println(
            "error: the extender still runs (Lease "
                + writer.get()
                + "): uninstall it first, or --force");
        return 2;
      }
      int failed = 0;
      for (Leftovers.Item i : items) {
        try {
          i.remove().run();
          out.println("removed: " + i);
        } catch (SlurmException | KubernetesClientException e) {
          failed++;
          err.println("failed: " + i.kind() + " " + i.what() + ": " + e.getMessage());
        }
      }
      return failed == 0 ? 0 : 2;
    } catch (SlurmException e) {
      err.println("error: Slurm: " + e.getMessage());
      return 2;
    } catch (KubernetesClientException | IllegalStateException e) {
      err.println("error: Kubernetes: " + e.getMessage());
      return 2;
    }
  }
}
