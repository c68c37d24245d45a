package io.kse.extender.lifecycle;

import io.kse.extender.k8s.KubeNodes;
import io.kse.extender.k8s.NodeNames;
import io.kse.policy.PlacementPolicy;
import io.kse.slurm.PlaceholderTag;
import io.kse.slurm.SlurmJob;
import io.kse.slurm.cache.SlurmView;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Supplier;

/**
 * What our pods may take now, node by node: a node cordoned or drained in Slurm takes none, and an
 * NVLink domain another exclusive-topology group holds takes no other group's leader. Read from the
 * views as they are; both the observer (is the allocated node usable?) and the submitter (which
 * nodes and domains to keep the placeholder off) ask here, so neither calls the other.
 */
final class NodeStanding {
  private final SlurmView cache;
  private final NodeNames nodeNames;
  private final Optional<KubeNodes> kubeNodes;
  private final Supplier<PlacementPolicy> policy;

  NodeStanding(
      SlurmView cache,
      NodeNames nodeNames,
      Optional<KubeNodes> kubeNodes,
      Supplier<PlacementPolicy> policy) {
    this.cache = cache;
    this.nodeNames = nodeNames;
    this.kubeNodes = kubeNodes;
    this.policy = policy;
  }

  /**
   * The Slurm node features of the nodes that other LeaderWorkerSet groups' live jobs hold: with
   * exclusive-topology, LWS keeps leaders of different groups out of each other's domain, so a
   * group's job must be placed in a domain none of them holds.
   */
  Set<String> domainsTakenBesides(String key) {
    return domainsTaken(key, Long.MAX_VALUE);
  }

  /** As {@link #domainsTakenBesides}, counting only jobs submitted before {@code beforeJob}. */
  private Set<String> domainsTaken(String key, long beforeJob) {
    Set<String> taken = new TreeSet<>();
    List<String> domains = policy.get().policy().cluster().nvlinkDomainFeatures();
    for (SlurmJob j : cache.snapshot().jobs().values()) {
      Optional<PlaceholderTag> t = cache.ours(j);
      if (t.isPresent()
          && j.id() < beforeJob
          && !j.state().isFinal()
          && j.state().holdsNodes()
          && t.get().group().flatMap(GroupKind::of).orElse(null) == GroupKind.LEADER_WORKER_SET
          && !t.get().key().equals(key)) {
        for (String n : j.nodes()) {
          cache
              .node(n)
              .ifPresent(
                  node -> node.features().stream().filter(domains::contains).forEach(taken::add));
        }
      }
    }
    return taken;
  }

  /**
   * Two exclusive groups submitted at once may land in one domain: the later job gives way (so the
   * two never both step back), and is replaced outside the domains others hold.
   */
  Optional<String> sharedDomain(String key, SlurmJob job) {
    Set<String> taken = domainsTaken(key, job.id());
    for (String n : job.nodes()) {
      Optional<String> shared =
          cache.node(n).stream()
              .flatMap(node -> node.features().stream())
              .filter(taken::contains)
              .findFirst();
      if (shared.isPresent()) {
        return Optional.of(
            n
                + " is in "
                + shared.get()
                + ", which another exclusive-topology group holds (LeaderWorkerSet keeps their"
                + " leaders apart)");
      }
    }
    return Optional.empty();
  }

  /**
   * The Slurm nodes whose Kubernetes node no pod of ours may go to now (cordoned, or tainted by us
   * as drained in Slurm): a placeholder allocated one would only be replaced.
   */
  Set<String> unusableSlurmNodes() {
    Set<String> out = new TreeSet<>();
    kubeNodes.ifPresent(
        k ->
            k.nodes().stream()
                .filter(n -> n.cordoned() || n.ourTaint().isPresent())
                .forEach(n -> out.add(nodeNames.slurm(n.name()))));
    return out;
  }

  /** Why a pod could not go to Kubernetes node {@code node} now: cordoned, or drained in Slurm. */
  Optional<String> unusable(String node) {
    return kubeNodes
        .flatMap(k -> k.node(node))
        .flatMap(
            n ->
                n.cordoned()
                    ? Optional.of(node + " is cordoned")
                    : n.ourTaint().map(t -> node + " is drained in Slurm (" + t + ")"));
  }
}
