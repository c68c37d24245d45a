package io.kse.extender.k8s;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderCallbacks;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderElectionConfigBuilder;
import io.fabric8.kubernetes.client.extended.leaderelection.resourcelock.LeaseLock;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * High availability: every replica answers kube-scheduler from its own caches, but only the holder
 * of this Lease acts on the world (submits, cancels, evicts, wakes pods, sweeps orphans), so two
 * replicas never submit a pod's placeholder twice. The lease is renewed every few seconds; a
 * replica that loses it stops acting at once, and the new leader re-checks every pod.
 */
public final class WriterLease implements BooleanSupplier, AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(WriterLease.class);

  /**
   * How long a dead writer keeps the Lease: the longest a fail-over waits (a restarted container
   * with the same POD_NAME takes its own Lease back at once). kube-scheduler's own default.
   */
  static final Duration LEASE_DURATION = Duration.ofSeconds(15);

  /** A writer that cannot renew within this stops acting, before a peer may take over. */
  static final Duration RENEW_DEADLINE = Duration.ofSeconds(10);

  /** How often a follower tries to take the Lease, and the writer renews it. */
  static final Duration RETRY_PERIOD = Duration.ofSeconds(2);

  private final AtomicBoolean leading = new AtomicBoolean();
  private volatile String holder;
  private final CompletableFuture<?> election;
  private final KubernetesClient client;
  private final String namespace;
  private final String name;
  private final String identity;

  /**
   * @param onStartLeading runs (on the elector's thread) when this replica becomes the writer
   */
  public WriterLease(
      KubernetesClient client,
      String namespace,
      String name,
      String identity,
      Runnable onStartLeading) {
    this.client = client;
    this.namespace = namespace;
    this.name = name;
    this.identity = identity;
    this.election =
        client
            .leaderElector()
            .withConfig(
                new LeaderElectionConfigBuilder()
                    .withName(name)
                    .withLock(new LeaseLock(namespace, name, identity))
                    .withLeaseDuration(LEASE_DURATION)
                    .withRenewDeadline(RENEW_DEADLINE)
                    .withRetryPeriod(RETRY_PERIOD)
                    .withReleaseOnCancel()
                    .withLeaderCallbacks(
                        new LeaderCallbacks(
                            () -> {
                              leading.set(true);
                              LOG.info(
                                  "leader_elected lease={}/{} identity={}",
                                  namespace,
                                  name,
                                  identity);
                              onStartLeading.run();
                            },
                            () -> {
                              leading.set(false);
                              LOG.info(
                                  "leader_lost lease={}/{} identity={}", namespace, name, identity);
                            },
                            newLeader -> {
                              holder = newLeader;
                              LOG.info(
                                  "leader_is lease={}/{} holder={}", namespace, name, newLeader);
                            }))
                    .build())
            .build()
            .start();
  }

  /** True while this replica holds the lease. */
  @Override
  public boolean getAsBoolean() {
    return leading.get();
  }

  /**
   * The writer's ops address, from its holder identity ({@code POD_NAME@host:port}, where it
   * advertises one: KSE_OPS_ADVERTISE); empty when no writer is known or it advertises none.
   */
  public java.util.Optional<String> writerAddress() {
    return addressIn(holder);
  }

  static java.util.Optional<String> addressIn(String identity) {
    if (identity == null || identity.lastIndexOf('@') < 0) {
      return java.util.Optional.empty();
    }
    String a = identity.substring(identity.lastIndexOf('@') + 1);
    return a.isEmpty() ? java.util.Optional.empty() : java.util.Optional.of(a);
  }

  @Override
  public void close() {
    leading.set(false);
    election.cancel(true); // releases the lease (releaseOnCancel) so a peer takes over at once
    clearHolder();
  }

  /**
   * fabric8's release renews the Lease with a 1 s duration and a null holder, but as a merge patch,
   * which leaves the holder in place: for 2 s a stopped replica still reads as the writer (to its
   * cleanup, to kubectl). Remove it while it is still ours: the update carries the version read, so
   * a peer that took the Lease meanwhile is left alone.
   */
  private void clearHolder() {
    try {
      Lease l = client.leases().inNamespace(namespace).withName(name).get();
      if (l == null || l.getSpec() == null || !identity.equals(l.getSpec().getHolderIdentity())) {
        return;
      }
      l.getSpec().setHolderIdentity(null);
      client.leases().inNamespace(namespace).resource(l).update();
    } catch (KubernetesClientException e) {
      // a peer took it (409) or the API server is away: the 1 s duration still hands it over
      LOG.warn(
          "lease_holder_not_cleared lease={}/{} identity={} error={}",
          namespace,
          name,
          identity,
          e.getMessage());
    }
  }
}
