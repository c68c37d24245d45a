package io.kse.extender.k8s;

import io.kse.policy.drift.TopologyDrift;
import io.kse.policy.model.ClusterSpec;
import io.kse.slurm.SlurmNode;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Compares, on every node-sync pass, the topology Kubernetes believes (node labels) with Slurm's
 * (node features and GRES), which is the truth ({@link TopologyDrift}). Each difference is logged
 * and told on its node(s) by a Warning Event once, when it appears, and once more in the log when
 * it goes; {@code kse_topology_drift} counts the differences now.
 */
public final class TopologyCheck {
  private static final Logger LOG = LoggerFactory.getLogger(TopologyCheck.class);
  private static final Pattern NODE = Pattern.compile("^nodes? \\[?([^:\\]]+)");

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
      java.time.Clock clock) {
    this.clock = clock;
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
    List<TopologyDrift.KubeSide> k = new ArrayList<>();
    for (KubeNodes.KubeNode n : kube.nodes()) {
      k.add(new TopologyDrift.KubeSide(names.slurm(n.name()), n.labels()));
    }
    Set<String> now = new LinkedHashSet<>(TopologyDrift.differences(cluster.get(), s, k));
    for (String d : now) {
      if (!current.contains(d)) {
        LOG.warn("topology_drift difference=\"{}\"", d.replace("\"", "'"));
        for (String node : nodesOf(d)) {
          warnings.warn(
              names.kubernetes(node),
              EventReason.TOPOLOGY_DRIFT,
              "Kubernetes and Slurm disagree on this node's topology (Slurm's is the truth): " + d);
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

  /** The Slurm node names a difference line begins with ("node a: ..." or "nodes [a, b] ..."). */
  static List<String> nodesOf(String difference) {
    Matcher m = NODE.matcher(difference);
    if (!m.find()) {
      return List.of();
    }
    List<String> out = new ArrayList<>();
    for (String n : m.group(1).split(",")) {
      if (!n.isBlank()) {
        out.add(n.trim());
      }
    }
    return out;
  }
}
