package io.kse.extender.k8s;

import io.kse.extender.concurrent.DaemonThreads;
import io.kse.slurm.SlurmNode;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Kubernetes' nodes kept in step with Slurm's, on a thread of their own: a node's cordon and drain
 * ({@link NodeSync}) whenever either side changes it, and every node pair plus the topology check
 * ({@link TopologyCheck}, the writer only) each period. One thread, so node work never waits for
 * placements and never races itself.
 */
public final class NodeUpkeep implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(NodeUpkeep.class);

  private final ExecutorService thread =
      Executors.newSingleThreadExecutor(DaemonThreads.named("kse-node-sync"));
  private final NodeInformer kubeNodes;
  private final NodeNames names;
  private final NodeSync sync;
  private final TopologyCheck topology;
  private final boolean drainSync;
  private final BooleanSupplier writer;

  /**
   * @param drainSync whether cordons and drains are synced (KSE_DRAIN_VIA is not off)
   * @param writer whether this replica is the writer (only it tells topology differences)
   */
  public NodeUpkeep(
      NodeInformer kubeNodes,
      NodeNames names,
      NodeSync sync,
      TopologyCheck topology,
      boolean drainSync,
      BooleanSupplier writer) {
    this.kubeNodes = kubeNodes;
    this.names = names;
    this.sync = sync;
    this.topology = topology;
    this.drainSync = drainSync;
    this.writer = writer;
  }

  /**
   * Follows both sides' node changes, and checks every node on {@code timer} each {@code period}.
   *
   * @param slurmNodes registers a listener of Slurm's node changes (before, after)
   */
  public void start(
      Consumer<BiConsumer<Optional<SlurmNode>, Optional<SlurmNode>>> slurmNodes,
      ScheduledExecutorService timer,
      Duration period) {
    kubeNodes.start(names, n -> thread.execute(() -> syncNode(n)));
    slurmNodes.accept(
        (before, after) ->
            after.ifPresent(n -> thread.execute(() -> syncNode(names.kubernetes(n.name())))));
    timer.scheduleWithFixedDelay(
        () -> thread.execute(this::syncAll),
        period.toMillis(),
        period.toMillis(),
        TimeUnit.MILLISECONDS);
  }

  private void syncNode(String node) {
    if (drainSync) {
      try {
        sync.reconcile(node);
      } catch (RuntimeException e) {
        LOG.warn("node_sync_failed node={} error={}", node, e.toString());
      }
    }
  }

  private void syncAll() {
    if (writer.getAsBoolean()) { // one replica tells the differences
      try {
        topology.checkIfDue();
      } catch (RuntimeException e) {
        LOG.warn("topology_check_failed error={}", e.toString());
      }
    }
    if (drainSync) {
      try {
        sync.reconcileAll();
      } catch (RuntimeException e) {
        LOG.warn("node_sync_failed error={}", e.toString());
      }
    }
  }

  @Override
  public void close() {
    thread.shutdownNow();
  }
}
