package io.kse.extender.tools;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kse.extender.k8s.FabricPodActions;
import io.kse.extender.k8s.NodeInformer;
import io.kse.extender.k8s.NodeSync;
import io.kse.extender.k8s.PodRef;
import io.kse.extender.k8s.WellKnown;
import io.kse.slurm.NodeAdmin;
import io.kse.slurm.PlaceholderOwner;
import io.kse.slurm.PlaceholderTag;
import io.kse.slurm.SlurmClient;
import io.kse.slurm.SlurmJob;
import io.kse.slurm.SlurmNode;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * What a removed extender leaves behind, found now: its placeholders still in Slurm, the Slurm
 * drains it made for cordoned nodes, its taints on Kubernetes nodes, its scheduling gate on pods,
 * its Leases and the preemption ledger. Each can be removed; what removing it does is said with it.
 * One whole job and node listing each: an uninstall's cost, never a steady state's.
 */
final class Leftovers {
  /** One thing left behind, what removing it does, and how. */
  record Item(String kind, String what, String onRemove, Runnable remove) {
    @Override
    public String toString() {
      return kind + " " + what + " => " + onRemove;
    }
  }

  /** Where to look and with whom to remove. */
  record Where(
      SlurmClient slurm,
      NodeAdmin nodeAdmin,
      boolean drainsMirrored,
      PlaceholderOwner owner,
      KubernetesClient kube,
      String leaseNamespace,
      String leaseName) {}

  private Leftovers() {}

  static List<Item> find(Where w, java.time.Instant now) {
    List<Item> out = new ArrayList<>();
    for (SlurmJob j : w.slurm().allJobs(j -> w.owner().tagOf(j).isPresent())) {
      if (j.state().isFinal()) {
        continue;
      }
      PlaceholderTag tag = w.owner().tagOf(j).orElseThrow();
      out.add(
          new Item(
              "placeholder",
              "Slurm job "
                  + j.id()
                  + " ("
                  + j.state()
                  + ") for pod "
                  + tag.namespace()
                  + "/"
                  + tag.name(),
              "scancel: its GPUs go back to Slurm; a pod still running there shares them with the"
                  + " next job (delete such pods first)",
              () -> w.slurm().cancel(j.id())));
    }
    for (SlurmNode n : w.slurm().nodes()) {
      if (n.reason().startsWith(NodeSync.DRAIN_REASON)) {
        out.add(
            new Item(
                "drain",
                "Slurm node " + n.name() + " (" + n.state() + ", reason \"" + n.reason() + "\")",
                w.drainsMirrored()
                    ? "resume it in Slurm (the Kubernetes cordon stays as it is)"
                    : "resume it by hand: scontrol update nodename=" + n.name() + " state=resume",
                w.drainsMirrored() ? () -> w.nodeAdmin().resume(n.name()) : () -> {}));
      }
    }
    NodeInformer nodes = new NodeInformer(w.kube());
    w.kube()
        .nodes()
        .list()
        .getItems()
        .forEach(
            n -> {
              var taints = n.getSpec() == null ? null : n.getSpec().getTaints();
              if (taints != null
                  && taints.stream().anyMatch(t -> WellKnown.TAINT_KEY.equals(t.getKey()))) {
                String name = n.getMetadata().getName();
                out.add(
                    new Item(
                        "taint",
                        "node " + name + " (" + WellKnown.TAINT_KEY + ")",
                        "remove the taint: pods of every scheduler may land there again",
                        () -> nodes.untaint(name)));
              }
            });
    FabricPodActions pods = new FabricPodActions(w.kube(), Clock.systemUTC());
    for (Pod p : w.kube().pods().inAnyNamespace().list().getItems()) {
      if (gated(p)) {
        out.add(
            new Item(
                "gate",
                "pod " + p.getMetadata().getNamespace() + "/" + p.getMetadata().getName(),
                "lift the gate "
                    + WellKnown.SCHEDULING_GATE
                    + ": the pod stays Pending while no scheduler serves schedulerName "
                    + p.getSpec().getSchedulerName()
                    + " (delete it, or change its workload's schedulerName)",
                () -> pods.ungate(PodRef.of(p))));
      }
    }
    for (String lease : leases(w)) {
      Lease l = w.kube().leases().inNamespace(w.leaseNamespace()).withName(lease).get();
      if (l != null && holder(l, now).isEmpty()) {
        out.add(
            new Item(
                "lease",
                w.leaseNamespace() + "/" + lease,
                "delete it: a new install elects afresh",
                () -> w.kube().leases().inNamespace(w.leaseNamespace()).withName(lease).delete()));
      }
    }
    return out;
  }

  /** The preemption ledger (budgets' history), kept unless asked: a reinstall carries it on. */
  static Optional<Item> ledger(Where w) {
    String name = w.leaseName() + "-preemptions";
    return Optional.ofNullable(
            w.kube().configMaps().inNamespace(w.leaseNamespace()).withName(name).get())
        .map(
            c ->
                new Item(
                    "ledger",
                    "ConfigMap " + w.leaseNamespace() + "/" + name,
                    "delete it: the tiers' preemption budgets start empty on a reinstall",
                    () ->
                        w.kube()
                            .configMaps()
                            .inNamespace(w.leaseNamespace())
                            .withName(name)
                            .delete()));
  }

  /** The writer's and kube-scheduler's Leases (manifests/base/scheduler-config.yaml). */
  private static List<String> leases(Where w) {
    return List.of(w.leaseName(), "kse-scheduler");
  }

  /**
   * The Leases still held, with their holders: an extender or kube-scheduler still runs there, and
   * removing its objects would fight it (a kube-scheduler whose Lease is deleted exits).
   */
  static List<String> held(Where w, java.time.Instant now) {
    List<String> out = new ArrayList<>();
    for (String lease : leases(w)) {
      Lease l = w.kube().leases().inNamespace(w.leaseNamespace()).withName(lease).get();
      if (l != null) {
        holder(l, now).ifPresent(h -> out.add(w.leaseNamespace() + "/" + lease + " held by " + h));
      }
    }
    return out;
  }

  /** The holder while the Lease is held and renewed within twice its duration. */
  private static Optional<String> holder(Lease l, java.time.Instant now) {
    var spec = l.getSpec();
    if (spec == null
        || spec.getHolderIdentity() == null
        || spec.getHolderIdentity().isEmpty()
        || spec.getRenewTime() == null) {
      return Optional.empty();
    }
    long duration = spec.getLeaseDurationSeconds() == null ? 15 : spec.getLeaseDurationSeconds();
    java.time.Instant renewed = spec.getRenewTime().toInstant();
    return renewed.plusSeconds(2 * duration).isAfter(now)
        ? Optional.of(spec.getHolderIdentity() + " (renewed " + renewed + ")")
        : Optional.empty();
  }

  private static boolean gated(Pod p) {
    return p.getSpec() != null
        && p.getSpec().getSchedulingGates() != null
        && p.getSpec().getSchedulingGates().stream()
            .anyMatch(g -> WellKnown.SCHEDULING_GATE.equals(g.getName()));
  }
}
