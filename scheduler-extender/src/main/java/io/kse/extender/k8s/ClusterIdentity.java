package io.kse.extender.k8s;

import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kse.slurm.PlaceholderTag;
import java.util.Locale;
import java.util.Optional;

/**
 * Which Kubernetes cluster this extender serves, written into every placeholder it submits so that
 * several clusters (production and staging, two regions) can share one Slurm without cancelling
 * each other's placeholders. Configured ({@code KSE_CLUSTER_ID}), or by default derived from the
 * UID of the cluster's {@code kube-system} namespace: stable for the cluster's life, the same for
 * every replica, different for every cluster.
 */
public final class ClusterIdentity {
  private volatile String id;

  private ClusterIdentity(String id) {
    this.id = id;
  }

  /** A known identity (configuration, tests). */
  public static ClusterIdentity of(String id) {
    if (!PlaceholderTag.validClusterId(id)) {
      throw new IllegalArgumentException(
          "cluster identity must be a DNS label (a-z 0-9 -, up to 63), got '" + id + "'");
    }
    return new ClusterIdentity(id);
  }

  /** Unknown until {@link #resolve} asks the API server. */
  public static ClusterIdentity unresolved(Optional<String> configured) {
    return configured.map(ClusterIdentity::of).orElseGet(() -> new ClusterIdentity(null));
  }

  /** Asks the API server for kube-system's UID, unless configured; returns the identity. */
  public String resolve(KubernetesClient kube) {
    if (id == null) {
      Namespace ns = kube.namespaces().withName("kube-system").get();
      if (ns == null || ns.getMetadata().getUid() == null) {
        throw new IllegalStateException(
            "cannot derive the cluster identity: namespace kube-system not found; set"
                + " KSE_CLUSTER_ID");
      }
      String uid = ns.getMetadata().getUid().toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9]", "");
      id = "k8s-" + uid.substring(0, Math.min(20, uid.length()));
    }
    return id;
  }

  /** The identity; only after {@link #resolve} (or when configured). */
  public String get() {
    String v = id;
    if (v == null) {
      throw new IllegalStateException("the cluster identity is not resolved yet");
    }
    return v;
  }

  @Override
  public String toString() {
    return id == null ? "(unresolved)" : id;
  }
}
