package io.kse.extender.k8s;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.kse.extender.lifecycle.GroupMembership.PodGroupSpec;
import io.kse.extender.lifecycle.PodGroupSource;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.BiConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * PodGroups of the Kubernetes Workload API ({@code scheduling.k8s.io/v1beta1}, Kubernetes 1.37 with
 * the GenericWorkload feature gate) through an informer: a gang's {@code minCount} and its topology
 * constraint. Where the API is not served, no pod's PodGroup exists.
 */
public final class PodGroupInformer implements PodGroupSource, AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(PodGroupInformer.class);
  public static final String API_VERSION = "scheduling.k8s.io/v1beta1";
  public static final String KIND = "PodGroup";

  private final KubernetesClient client;
  private volatile SharedIndexInformer<GenericKubernetesResource> informer;

  public PodGroupInformer(KubernetesClient client) {
    this.client = client;
  }

  /** Starts watching if the API server serves PodGroups; {@code onChange(namespace, name)}. */
  public boolean start(BiConsumer<String, String> onChange) {
    if (!client.supports(API_VERSION, KIND)) {
      LOG.info(
          "podgroups_not_served apiVersion={} (Workload API gangs are not recognised)",
          API_VERSION);
      return false;
    }
    informer =
        client
            .genericKubernetesResources(API_VERSION, KIND)
            .inAnyNamespace()
            .withLimit(InformerPages.SIZE)
            .inform(
                new ResourceEventHandler<>() {
                  @Override
                  public void onAdd(GenericKubernetesResource g) {
                    changed(g);
                  }

                  @Override
                  public void onUpdate(GenericKubernetesResource old, GenericKubernetesResource g) {
                    changed(g);
                  }

                  @Override
                  public void onDelete(GenericKubernetesResource g, boolean unknown) {
                    changed(g);
                  }

                  private void changed(GenericKubernetesResource g) {
                    onChange.accept(g.getMetadata().getNamespace(), g.getMetadata().getName());
                  }
                },
                0);
    return true;
  }

  @Override
  public Optional<PodGroupSpec> podGroup(String namespace, String name) {
    SharedIndexInformer<GenericKubernetesResource> i = informer;
    if (i == null) {
      return Optional.empty();
    }
    GenericKubernetesResource g = i.getStore().getByKey(namespace + "/" + name);
    return g == null ? Optional.empty() : spec(g);
  }

  /** The gang's size and topology key; empty for a PodGroup without a gang policy. */
  static Optional<PodGroupSpec> spec(GenericKubernetesResource g) {
    Object spec = g.getAdditionalProperties().get("spec");
    if (!(spec instanceof Map<?, ?> s)
        || !(s.get("schedulingPolicy") instanceof Map<?, ?> policy)
        || !(policy.get("gang") instanceof Map<?, ?> gang)
        || !(gang.get("minCount") instanceof Number min)) {
      return Optional.empty();
    }
    Optional<String> key = Optional.empty();
    if (s.get("schedulingConstraints") instanceof Map<?, ?> c
        && c.get("topology") instanceof List<?> topology
        && !topology.isEmpty()
        && topology.get(0) instanceof Map<?, ?> t
        && t.get("key") instanceof String k) {
      key = Optional.of(k);
    }
    boolean scheduled = false;
    if (g.getAdditionalProperties().get("status") instanceof Map<?, ?> st
        && st.get("conditions") instanceof List<?> conditions) {
      scheduled =
          conditions.stream()
              .anyMatch(
                  c ->
                      c instanceof Map<?, ?> m
                          && SCHEDULED.equals(m.get("type"))
                          && "True".equals(m.get("status")));
    }
    return Optional.of(new PodGroupSpec(min.intValue(), key, scheduled));
  }

  /** The condition kube-scheduler's gang plugin sets once a gang is placed (1.37). */
  public static final String SCHEDULED = "PodGroupInitiallyScheduled";

  @Override
  public void markScheduled(String namespace, String name, String message) {
    String now =
        java.time.Instant.now().truncatedTo(java.time.temporal.ChronoUnit.SECONDS).toString();
    Map<String, Object> condition =
        Map.of(
            "type", SCHEDULED,
            "status", "True",
            "reason", "Scheduled",
            "message", message,
            "lastTransitionTime", now);
    try {
      client
          .genericKubernetesResources(API_VERSION, KIND)
          .inNamespace(namespace)
          .withName(name)
          .subresource("status")
          .patch(
              io.fabric8.kubernetes.client.dsl.base.PatchContext.of(
                  io.fabric8.kubernetes.client.dsl.base.PatchType.STRATEGIC_MERGE),
              JSON.writeValueAsString(Map.of("status", Map.of("conditions", List.of(condition)))));
      LOG.info("podgroup_scheduled podGroup={}/{}", namespace, name);
    } catch (RuntimeException | com.fasterxml.jackson.core.JsonProcessingException e) {
      LOG.warn("podgroup_status_failed podGroup={}/{} error={}", namespace, name, e.getMessage());
    }
  }

  private static final com.fasterxml.jackson.databind.ObjectMapper JSON =
      new com.fasterxml.jackson.databind.ObjectMapper();

  @Override
  public void close() {
    SharedIndexInformer<GenericKubernetesResource> i = informer;
    if (i != null) {
      i.close();
    }
  }
}
