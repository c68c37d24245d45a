package io.kse.slurm.cache;

import io.kse.slurm.NodeListing;
import io.kse.slurm.SlurmClient;
import io.kse.slurm.SlurmNode;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Slurm's nodes: the table at its interval (only when a node changed, where slurmrestd can say so:
 * v0.0.45), and in between the nodes a trigger names, one read each.
 */
final class NodeTable {
  private static final Logger LOG = LoggerFactory.getLogger(NodeTable.class);

  /** Nodes one hint may have read one by one; a hint naming more lists the node table instead. */
  static final int MAX_NODE_READS = 32;

  private final SlurmClient client;
  private final Duration every;
  private volatile Instant lastListing = Instant.EPOCH;
  private volatile boolean synced;
  private Instant changedSince = Instant.EPOCH; // under the pass lock

  NodeTable(SlurmClient client, Duration every) {
    this.client = client;
    this.every = every;
  }

  boolean due(Instant now) {
    return PassPlan.listNodes(lastListing, every, now);
  }

  /** The table if a node changed since the last one, else empty (nothing to replace). */
  Optional<Map<String, SlurmNode>> list(Instant now) {
    NodeListing nodes = client.nodesChangedSince(changedSince);
    lastListing = now;
    if (!nodes.changed()) {
      return Optional.empty();
    }
    changedSince = nodes.asOf();
    Map<String, SlurmNode> byName = new HashMap<>();
    nodes.nodes().forEach(n -> byName.put(n.name(), n));
    return Optional.of(Map.copyOf(byName));
  }

  /** A pass holding a listing was published. */
  void published() {
    synced = true;
  }

  boolean synced() {
    return synced;
  }

  /**
   * {@code current} with each named node read again ({@code GET node/NAME}, a few KB). More than
   * {@link #MAX_NODE_READS} names, a name Slurm does not know, or a read that fails, and the table
   * is listed on the next pass instead; what was read before is kept.
   */
  Map<String, SlurmNode> read(Collection<String> names, Map<String, SlurmNode> current) {
    if (names.size() > MAX_NODE_READS) {
      listNextPass();
      return current;
    }
    Map<String, SlurmNode> nodes = new HashMap<>(current);
    try {
      for (String name : names) {
        Optional<SlurmNode> now = client.node(name);
        if (now.isEmpty()) {
          listNextPass(); // a node removed or renamed: the table says which
          break;
        }
        nodes.put(name, now.get());
      }
    } catch (RuntimeException e) {
      listNextPass();
      LOG.debug("node_read_failed nodes={} error={}", names, e.toString());
    }
    return Map.copyOf(nodes);
  }

  /** The table is due at once: the next pass lists it, whatever its interval. */
  void listNextPass() {
    lastListing = Instant.EPOCH;
  }
}
