package io.kse.extender.k8s;

import io.kse.policy.drift.TopologyDrift;
import io.kse.policy.model.ClusterSpec;
import io.kse.slurm.SlurmNode;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Compares, every {@link #INTERVAL}, the topology Kubernetes believes (node labels) with Slurm's
 * (node features and GRES), which is the truth ({@link TopologyDrift}). Each difference is logged
 * and told on its node(s) by a Warning Event once, when it appears, and once more in the log when
 * it goes; {@code kse_topology_drift} counts the differences now. With the label sync on ({@code
 * KSE_NODE_LABEL_SYNC}), the labels Slurm implies are written first, so an operator keeps one file
 * (Slurm's) and only what cannot be derived can differ.
 */
public final class TopologyCheck {
  private static final Logger LOG = LoggerFactory.getLogger(TopologyCheck.class);

  /** Where a difference is told: a Warning Event on a Kubernetes node. */
  public interface NodeWarnings {
    void warn(String kubernetesNode, EventReason reason, String message);
  }

  private final KubeNodes kube;
  private final Supplier<? extends java.util.Collection<SlurmNode>> slurm;
  private final NodeNames names;
  private final Supplier<ClusterSpec> cluster;
  private final NodeWarnings warnings;
  private final java.time.Clock clock;
  private final boolean syncLabels;
  private volatile Set<String> current = Set.of();
  private java.time.Instant last = java.time.Instant.MIN;

  /** How often the comparison runs at most: labels and features change by hand, rarely. */
  public static final java.time.Duration INTERVAL = java.time.Duration.ofSeconds(30);

  public TopologyCheck(
      KubeNodes kube,
      Supplier<? extends java.util.Collection<SlurmNode>> slurm,
      NodeNames names,
      Supplier<ClusterSpec> cluster,
      NodeWarnings warnings,
      java.time.Clock clock,
      boolean syncLabels) {
    this.clock = clock;
    this.syncLabels = syncLabels;
    this.kube = kube;
    this.slurm = slurm;
    this.names = names;
    this.cluster = cluster;
    this.warnings = warnings;
  }

  /** The differences now (also what the gauge reports). */
  public Set<String> differences() {
    return current;
  }

  /** A comparison if the last one is {@link #INTERVAL} old. */
  public synchronized void checkIfDue() {
    java.time.Instant now = clock.instant();
    if (last.plus(INTERVAL).isAfter(now)) {
      return;
    }
    last = now;
    check();
  }

  /** One comparison; call from one thread at a time. */
  public synchronized void check() {
    List<TopologyDrift.SlurmSide> s = new ArrayList<>();
    for (SlurmNode n : slurm.get()) {
      s.add(new TopologyDrift.SlurmSide(n.name(), n.features(), n.gres()));
    }
    java.util.Map<String, TopologyDrift.SlurmSide> bySlurm = new java.util.HashMap<>();
    s.forEach(n -> bySlurm.put(n.name(), n));
    List<TopologyDrift.KubeSide> k = new ArrayList<>();
    for (KubeNodes.KubeNode n : kube.nodes()) {
      String slurmName = names.slurm(n.name());
      java.util.Map<String, String> labels = n.labels();
      if (syncLabels && bySlurm.containsKey(slurmName)) {
        labels = synced(n, bySlurm.get(slurmName));
      }
      k.add(new TopologyDrift.KubeSide(slurmName, labels));
    }
    List<TopologyDrift.Difference> found = TopologyDrift.differencesOf(cluster.get(), s, k);
    Set<String> now = new LinkedHashSet<>();
    for (TopologyDrift.Difference d : found) {
      now.add(d.text());
      if (!current.contains(d.text())) {
        LOG.warn("topology_drift difference=\"{}\"", d.text().replace("\"", "'"));
        for (String node : d.nodes()) {
          warnings.warn(
              names.kubernetes(node),
              EventReason.TOPOLOGY_DRIFT,
              "Kubernetes and Slurm disagree on this node's topology (Slurm's is the truth): "
                  + d.text());
        }
      }
    }
    for (String d : current) {
      if (!now.contains(d)) {
        LOG.info("topology_drift_resolved difference=\"{}\"", d.replace("\"", "'"));
      }
    }
    current = Set.copyOf(now);
  }

  /**
   * Writes the labels Slurm implies where the node's differ; returns the labels as they are once
   * written (as they were, when the API refused).
   */
  private java.util.Map<String, String> synced(KubeNodes.KubeNode n, TopologyDrift.SlurmSide s) {
    java.util.Map<String, java.util.Optional<String>> changes = new java.util.TreeMap<>();
    TopologyDrift.derivedLabels(cluster.get(), s)
        .forEach(
            (key, want) -> {
              if (!java.util.Optional.ofNullable(n.labels().get(key)).equals(want)) {
                changes.put(key, want);
              }
            });
    if (changes.isEmpty()) {
      return n.labels();
    }
    if (!kube.label(n.name(), changes)) {
      LOG.warn("node_labels_sync_failed node={} labels={}", n.name(), changes);
      return n.labels();
    }
    LOG.info("node_labels_synced node={} slurmNode={} labels={}", n.name(), s.name(), changes);
    java.util.Map<String, String> after = new java.util.HashMap<>(n.labels());
    changes.forEach((key, v) -> v.ifPresentOrElse(x -> after.put(key, x), () -> after.remove(key)));
    return after;
  }
}
