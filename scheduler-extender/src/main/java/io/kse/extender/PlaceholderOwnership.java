package io.kse.extender;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.kse.extender.k8s.ClusterIdentity;
import io.kse.slurm.PlaceholderOwner;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whose placeholders are ours, learnt before anything reads Slurm's jobs: this Kubernetes cluster's
 * identity (another cluster's placeholders on a shared Slurm are not ours) and the Slurm user that
 * submits them (our comment copied under another user is an impostor).
 */
final class PlaceholderOwnership {
  private static final Logger LOG = LoggerFactory.getLogger(PlaceholderOwnership.class);

  private PlaceholderOwnership() {}

  static PlaceholderOwner resolve(
      ClusterIdentity cluster, KubernetesClient kube, ExtenderConfig cfg) {
    String id = cluster.resolve(kube);
    Optional<String> slurmUser = cfg.slurm().submittingUser();
    LOG.info(
        "cluster_identity id={} configured={} slurmUser={}",
        id,
        cfg.clusterId().isPresent(),
        slurmUser.orElse("-"));
    if (slurmUser.isEmpty()) {
      LOG.warn(
          "placeholder_owner_unknown reason=\"neither KSE_SLURM_USER nor the JWT names the Slurm"
              + " user: placeholders are recognised by their comment alone, which any Slurm user"
              + " can copy\"");
    }
    return new PlaceholderOwner(Optional.of(id), slurmUser);
  }
}
