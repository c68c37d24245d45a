package io.kse.extender.k8s;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Slurm node name ↔ Kubernetes node name. By default the names are the same (the Slonk/SUNK
 * pattern); a Kubernetes node may instead carry the label {@value WellKnown#SLURM_NODE_LABEL}
 * naming its Slurm node. The label's prefix is one the NodeRestriction admission plugin forbids
 * kubelets to set, so a compromised node cannot claim another node's allocations. A Slurm node
 * claimed by two Kubernetes nodes (two labels, or a label and a node of that name) maps to none: no
 * pod is let onto either until an admin resolves it ({@link #conflicts}).
 */
public final class NodeNames {
  /** What an ambiguous Slurm node maps to: no Kubernetes node has an empty name. */
  static final String NONE = "";

  private final Map<String, String> kubeToSlurm = new ConcurrentHashMap<>();
  private final Map<String, Set<String>> claims = new ConcurrentHashMap<>();
  private final Set<String> kubeNodes = ConcurrentHashMap.newKeySet();

  /** Records a Kubernetes node and its label (or its absence: null). */
  public synchronized void observe(String kubeNode, String slurmLabel) {
    unclaim(kubeNode);
    kubeNodes.add(kubeNode);
    if (slurmLabel != null && !slurmLabel.isBlank()) {
      kubeToSlurm.put(kubeNode, slurmLabel);
      claims.computeIfAbsent(slurmLabel, k -> ConcurrentHashMap.newKeySet()).add(kubeNode);
    }
  }

  public synchronized void forget(String kubeNode) {
    unclaim(kubeNode);
    kubeNodes.remove(kubeNode);
  }

  private void unclaim(String kubeNode) {
    String old = kubeToSlurm.remove(kubeNode);
    if (old != null) {
      Set<String> c = claims.get(old);
      if (c != null) {
        c.remove(kubeNode);
        if (c.isEmpty()) {
          claims.remove(old);
        }
      }
    }
  }

  /** How many Kubernetes nodes there are now. */
  public int kubernetesNodes() {
    return kubeNodes.size();
  }

  public String kubernetes(String slurmNode) {
    Set<String> c = claims.get(slurmNode);
    if (c == null || c.isEmpty()) {
      return slurmNode;
    }
    return claimants(slurmNode).size() == 1 ? c.iterator().next() : NONE;
  }

  public String slurm(String kubeNode) {
    return kubeToSlurm.getOrDefault(kubeNode, kubeNode);
  }

  /** The Kubernetes nodes that claim this Slurm node: by label, or by name when unlabelled. */
  public Set<String> claimants(String slurmNode) {
    Set<String> out = new TreeSet<>(claims.getOrDefault(slurmNode, Set.of()));
    if (kubeNodes.contains(slurmNode) && !kubeToSlurm.containsKey(slurmNode)) {
      out.add(slurmNode);
    }
    return out;
  }

  /** Slurm nodes that more than one Kubernetes node claims (each maps to no node). */
  public List<String> conflicts() {
    return claims.keySet().stream().filter(s -> claimants(s).size() > 1).sorted().toList();
  }

  /** The Slurm node a Kubernetes node is labelled with, if any. */
  public Optional<String> label(String kubeNode) {
    return Optional.ofNullable(kubeToSlurm.get(kubeNode));
  }
}
