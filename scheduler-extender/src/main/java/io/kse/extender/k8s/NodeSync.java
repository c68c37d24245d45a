package io.kse.extender.k8s;

import io.kse.slurm.NodeAdmin;
import io.kse.slurm.SlurmException;
import io.kse.slurm.SlurmNode;
import io.kse.slurm.cache.SlurmView;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps cordons and drains in step across the two schedulers of one pool of nodes:
 *
 * <ul>
 *   <li>a cordoned Kubernetes node drains its Slurm node, with the reason {@value #DRAIN_REASON};
 *       uncordoning resumes it, but only a drain with that reason (an SRE's own drain stays);
 *   <li>a Slurm node that is drained, down, failed or not responding for any other reason gets the
 *       NoSchedule taint {@value WellKnown#TAINT_KEY} (value: its state, e.g. {@code down}, {@code
 *       mixed-drain}, {@code idle-notresponding}); it goes when Slurm has the node back. Other
 *       taints are never touched.
 * </ul>
 *
 * Our own drain never taints and our taint never drains, so the two rules cannot feed each other.
 */
public final class NodeSync {
  private static final Logger LOG = LoggerFactory.getLogger(NodeSync.class);
  public static final String DRAIN_REASON = "kse: cordoned in Kubernetes";

  private final KubeNodes kube;
  private final SlurmView slurm;
  private final java.util.function.Consumer<java.util.List<String>> readBack;
  private final NodeAdmin admin;
  private final NodeNames names;
  private final BooleanSupplier writer;
  private final Set<String> warned = ConcurrentHashMap.newKeySet();

  public NodeSync(
      KubeNodes kube,
      SlurmView slurm,
      java.util.function.Consumer<java.util.List<String>> readBack,
      NodeAdmin admin,
      NodeNames names,
      BooleanSupplier writer) {
    this.kube = kube;
    this.slurm = slurm;
    this.readBack = readBack;
    this.admin = admin;
    this.names = names;
    this.writer = writer;
  }

  /** Every node pair: periodic, so a change the informers missed is still brought in step. */
  public void reconcileAll() {
    kube.nodes().forEach(n -> reconcile(n.name()));
  }

  /** Brings one node pair in step; safe to call any time, from one thread at a time. */
  public synchronized void reconcile(String kubeNode) {
    if (!writer.getAsBoolean()) {
      return;
    }
    Optional<KubeNodes.KubeNode> k = kube.node(kubeNode);
    String slurmName = names.slurm(kubeNode);
    Optional<SlurmNode> s = slurm.node(slurmName);
    if (k.isEmpty() || s.isEmpty()) {
      return; // not a node of both worlds (e.g. CPU-only Kubernetes nodes)
    }
    boolean ourDrain = s.get().isDraining() && s.get().reason().startsWith(DRAIN_REASON);
    try {
      boolean changed = false;
      if (k.get().cordoned() && !s.get().isDraining()) {
        admin.drain(slurmName, DRAIN_REASON);
        changed = true;
        LOG.info(
            "node_drained node={} slurmNode={} reason=\"cordoned in Kubernetes\"",
            kubeNode,
            slurmName);
      } else if (!k.get().cordoned() && ourDrain) {
        admin.resume(slurmName);
        changed = true;
        LOG.info(
            "node_resumed node={} slurmNode={} reason=\"uncordoned in Kubernetes\"",
            kubeNode,
            slurmName);
      }
      if (changed) {
        // see our own change now: with node triggers the node table is minutes apart, and until
        // the cache shows the drain every periodic pass would drain the node again
        readBack.accept(java.util.List.of(slurmName));
      }
    } catch (SlurmException e) {
      if (warned.add(kubeNode + e.getClass().getSimpleName())) {
        LOG.warn(
            "node_drain_sync_failed node={} slurmNode={} error={}",
            kubeNode,
            slurmName,
            e.getMessage());
      }
    }
    boolean unavailable = s.get().isUnavailable() && !ourDrain;
    String value = s.get().unavailableAs();
    if (unavailable && !k.get().ourTaint().equals(Optional.of(value))) {
      boolean done = kube.taint(kubeNode, value);
      LOG.info(
          "{} node={} slurmNode={} slurmState={} slurmReason=\"{}\"",
          done ? "node_tainted" : "node_taint_failed",
          kubeNode,
          slurmName,
          value,
          s.get().reason());
    } else if (!unavailable && k.get().ourTaint().isPresent()) {
      boolean done = kube.untaint(kubeNode);
      LOG.info(
          "{} node={} slurmNode={}",
          done ? "node_untainted" : "node_untaint_failed",
          kubeNode,
          slurmName);
    }
  }
}
