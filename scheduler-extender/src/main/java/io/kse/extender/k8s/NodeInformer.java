package io.kse.extender.k8s;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Taint;
import io.fabric8.kubernetes.api.model.TaintBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Kubernetes nodes through an informer: the Slurm-name label, cordons, and our taint. */
public final class NodeInformer implements KubeNodes, AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(NodeInformer.class);

  private final KubernetesClient client;
  private volatile SharedIndexInformer<Node> informer;
  private final java.util.concurrent.atomic.AtomicInteger count =
      new java.util.concurrent.atomic.AtomicInteger();

  public NodeInformer(KubernetesClient client) {
    this.client = client;
  }

  /** Starts watching; every change updates {@code names} and is passed to {@code onChange}. */
  public void start(NodeNames names, Consumer<String> onChange) {
    SharedIndexInformer<Node> inf =
        client.nodes().withLimit(InformerPages.SIZE).runnableInformer(0);
    // 5,000 nodes with their status (conditions, images, addresses) and managedFields were most of
    // the live heap; the extender reads names, labels, cordons and taints
    inf.itemStore(SlimItemStore.nodes());
    informer = inf;
    inf.addEventHandler(
        new ResourceEventHandler<>() {
          @Override
          public void onAdd(Node n) {
            count.incrementAndGet();
            names.observe(n.getMetadata().getName(), label(n));
            reportConflicts(names, n);
            onChange.accept(n.getMetadata().getName());
          }

          @Override
          public void onUpdate(Node old, Node n) {
            names.observe(n.getMetadata().getName(), label(n));
            reportConflicts(names, n);
            onChange.accept(n.getMetadata().getName());
          }

          @Override
          public void onDelete(Node n, boolean unknown) {
            count.decrementAndGet();
            names.forget(n.getMetadata().getName());
          }
        });
    inf.run(); // as inform() did: returns once the first listing is in the store
  }

  /** Conflicts already told (a Slurm node name → its claimants), so each is said once. */
  private final java.util.Map<String, java.util.Set<String>> told =
      new java.util.concurrent.ConcurrentHashMap<>();

  /**
   * Two Kubernetes nodes claiming one Slurm node: neither gets pods Slurm allocated there; the
   * admin is told on each node (Warning Event) and in the log.
   */
  private void reportConflicts(NodeNames names, Node n) {
    String slurm = names.slurm(n.getMetadata().getName());
    java.util.Set<String> claimants = names.claimants(slurm);
    if (claimants.size() < 2) {
      told.remove(slurm);
      return;
    }
    if (claimants.equals(told.put(slurm, claimants))) {
      return;
    }
    String why =
        "Slurm node "
            + slurm
            + " is claimed by Kubernetes nodes "
            + claimants
            + " (label "
            + WellKnown.SLURM_NODE_LABEL
            + " or node name): no pod is placed on it until only one claims it";
    LOG.warn("node_mapping_conflict slurmNode={} kubernetesNodes={}", slurm, claimants);
    for (String k : claimants) {
      warn(k, EventReason.NODE_MAPPING_CONFLICT, why);
    }
  }

  /** A Warning Event on Kubernetes node {@code k}; a refusal is logged, never thrown. */
  public void warn(String k, EventReason reason, String why) {
    try {
      client
          .v1()
          .events()
          .inNamespace("default")
          .resource(
              new io.fabric8.kubernetes.api.model.EventBuilder()
                  .withNewMetadata()
                  .withGenerateName(k + ".kse-")
                  .withNamespace("default")
                  .endMetadata()
                  .withNewInvolvedObject()
                  .withKind("Node")
                  .withApiVersion("v1")
                  .withName(k)
                  .endInvolvedObject()
                  .withType("Warning")
                  .withReason(reason.reason())
                  .withMessage(why)
                  .withNewSource()
                  .withComponent("kube-slurm-extender")
                  .endSource()
                  .build())
          .create();
    } catch (KubernetesClientException e) {
      LOG.debug("node_event_failed node={} error={}", k, e.getMessage());
    }
  }

  private static String label(Node n) {
    return n.getMetadata().getLabels() == null
        ? null
        : n.getMetadata().getLabels().get(WellKnown.SLURM_NODE_LABEL);
  }

  /** How many nodes the cluster has, as last seen (0 before the first listing). */
  public int size() {
    return Math.max(0, count.get());
  }

  public boolean synced() {
    return informer != null && informer.hasSynced();
  }

  @Override
  public Collection<KubeNode> nodes() {
    return informer == null
        ? List.of()
        : informer.getStore().list().stream().map(NodeInformer::view).toList();
  }

  @Override
  public Optional<KubeNode> node(String name) {
    return informer == null
        ? Optional.empty()
        : Optional.ofNullable(informer.getStore().getByKey(name)).map(NodeInformer::view);
  }

  private static KubeNode view(Node n) {
    boolean cordoned = n.getSpec() != null && Boolean.TRUE.equals(n.getSpec().getUnschedulable());
    Optional<String> taint =
        n.getSpec() == null || n.getSpec().getTaints() == null
            ? Optional.empty()
            : n.getSpec().getTaints().stream()
                .filter(t -> WellKnown.TAINT_KEY.equals(t.getKey()))
                .map(t -> t.getValue() == null ? "" : t.getValue())
                .findFirst();
    return new KubeNode(
        n.getMetadata().getName(),
        cordoned,
        taint,
        n.getMetadata().getLabels() == null ? java.util.Map.of() : n.getMetadata().getLabels());
  }

  @Override
  public boolean taint(String node, String value) {
    return edit(
        node,
        n -> {
          List<Taint> taints =
              new ArrayList<>(
                  n.getSpec().getTaints() == null ? List.of() : n.getSpec().getTaints());
          taints.removeIf(t -> WellKnown.TAINT_KEY.equals(t.getKey()));
          taints.add(
              new TaintBuilder()
                  .withKey(WellKnown.TAINT_KEY)
                  .withValue(value)
                  .withEffect("NoSchedule")
                  .build());
          n.getSpec().setTaints(taints);
        });
  }

  @Override
  public boolean label(String node, java.util.Map<String, Optional<String>> labels) {
    return edit(
        node,
        n -> {
          java.util.Map<String, String> now =
              n.getMetadata().getLabels() == null
                  ? new java.util.HashMap<>()
                  : new java.util.HashMap<>(n.getMetadata().getLabels());
          labels.forEach(
              (k, v) -> {
                if (v.isPresent()) {
                  now.put(k, v.get());
                } else {
                  now.remove(k);
                }
              });
          n.getMetadata().setLabels(now);
        });
  }

  @Override
  public boolean untaint(String node) {
    return edit(
        node,
        n -> {
          if (n.getSpec().getTaints() != null) {
            List<Taint> taints = new ArrayList<>(n.getSpec().getTaints());
            taints.removeIf(t -> WellKnown.TAINT_KEY.equals(t.getKey()));
            n.getSpec().setTaints(taints);
          }
        });
  }

  private boolean edit(String node, Consumer<Node> change) {
    try {
      client
          .nodes()
          .withName(node)
          .edit(
              n -> {
                if (n.getSpec() == null) {
                  n.setSpec(new io.fabric8.kubernetes.api.model.NodeSpec());
                }
                change.accept(n);
                return n;
              });
      return true;
    } catch (KubernetesClientException e) {
      LOG.warn("node_edit_failed node={} error={}", node, e.getMessage());
      return false;
    }
  }

  @Override
  public void close() {
    if (informer != null) {
      informer.close();
    }
  }
}
