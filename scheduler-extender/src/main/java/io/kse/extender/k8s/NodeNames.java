package io.kse.extender.k8s;

import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Slurm node name ↔ Kubernetes node name. By default the names are the same (the Slonk/SUNK
 * pattern); a Kubernetes node may instead carry the label {@value #LABEL} naming its Slurm node.
 */
public final class NodeNames {
  public static final String LABEL = "kse.io/slurm-node";

  private final Map<String, String> slurmToKube = new ConcurrentHashMap<>();
  private final Map<String, String> kubeToSlurm = new ConcurrentHashMap<>();

  /** Records a Kubernetes node's label (or its absence: null). */
  public void observe(String kubeNode, String slurmLabel) {
    String old = kubeToSlurm.remove(kubeNode);
    if (old != null) {
      slurmToKube.remove(old, kubeNode);
    }
    if (slurmLabel != null && !slurmLabel.isBlank()) {
      kubeToSlurm.put(kubeNode, slurmLabel);
      slurmToKube.put(slurmLabel, kubeNode);
    }
  }

  public void forget(String kubeNode) {
    observe(kubeNode, null);
  }

  public String kubernetes(String slurmNode) {
    return slurmToKube.getOrDefault(slurmNode, slurmNode);
  }

  public String slurm(String kubeNode) {
    return kubeToSlurm.getOrDefault(kubeNode, kubeNode);
  }

  public Optional<String> labelled(String slurmNode) {
    return Optional.ofNullable(slurmToKube.get(slurmNode));
  }
}
