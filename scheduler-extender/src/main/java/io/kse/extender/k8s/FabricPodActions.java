package io.kse.extender.k8s;

import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.api.model.ObjectReferenceBuilder;
import io.fabric8.kubernetes.api.model.policy.v1.EvictionBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.kse.extender.wire.PodRef;
import java.time.Clock;
import java.time.format.DateTimeFormatter;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** {@link PodActions} through the API server. Failures are logged, never thrown: best effort. */
public final class FabricPodActions implements PodActions {
  private static final Logger LOG = LoggerFactory.getLogger(FabricPodActions.class);
  private static final String COMPONENT = "kube-slurm-extender";

  private final KubernetesClient client;
  private final Clock clock;

  public FabricPodActions(KubernetesClient client, Clock clock) {
    this.client = client;
    this.clock = clock;
  }

  @Override
  public void event(PodRef pod, boolean warning, String reason, String message) {
    String now =
        DateTimeFormatter.ISO_INSTANT.format(
            clock.instant().truncatedTo(java.time.temporal.ChronoUnit.SECONDS));
    try {
      client
          .v1()
          .events()
          .inNamespace(pod.namespace())
          .resource(
              new EventBuilder()
                  .withNewMetadata()
                  .withName(pod.name() + "." + UUID.randomUUID().toString().substring(0, 8))
                  .withNamespace(pod.namespace())
                  .endMetadata()
                  .withInvolvedObject(
                      new ObjectReferenceBuilder()
                          .withKind("Pod")
                          .withApiVersion("v1")
                          .withNamespace(pod.namespace())
                          .withName(pod.name())
                          .withUid(pod.uid())
                          .build())
                  .withType(warning ? "Warning" : "Normal")
                  .withReason(reason)
                  .withMessage(message.length() > 1000 ? message.substring(0, 1000) : message)
                  .withNewSource()
                  .withComponent(COMPONENT)
                  .endSource()
                  .withFirstTimestamp(now)
                  .withLastTimestamp(now)
                  .withCount(1)
                  .build())
          .create();
    } catch (KubernetesClientException e) {
      LOG.warn("event_failed pod={} reason={} error={}", pod, reason, e.getMessage());
    }
  }

  @Override
  public void wake(PodRef pod, String node, long jobId) {
    try {
      // a pod update requeues a pod an extender rejected (kube-scheduler ≥ 1.29 and backports)
      client
          .pods()
          .inNamespace(pod.namespace())
          .withName(pod.name())
          .edit(
              p -> {
                if (p.getMetadata().getUid().equals(pod.uid())) {
                  p.getMetadata()
                      .getAnnotations()
                      .put(WellKnown.JOB_ANNOTATION, Long.toString(jobId));
                  p.getMetadata().getAnnotations().put(WellKnown.NODE_ANNOTATION, node);
                }
                return p;
              });
    } catch (KubernetesClientException e) {
      LOG.warn("wake_failed pod={} uid={} node={} error={}", pod, pod.uid(), node, e.getMessage());
      return;
    }
    try {
      // a hint that steers the next attempt to the node (KEP-5278); refused on older clusters
      client
          .pods()
          .inNamespace(pod.namespace())
          .withName(pod.name())
          .subresource("status")
          .edit(
              p -> {
                if (p.getMetadata().getUid().equals(pod.uid()) && p.getStatus() != null) {
                  p.getStatus().setNominatedNodeName(node);
                }
                return p;
              });
    } catch (KubernetesClientException e) {
      LOG.debug("nominate_failed pod={} node={} error={}", pod, node, e.getMessage());
    }
  }

  @Override
  public void evict(PodRef pod, String reason) {
    try {
      client
          .pods()
          .inNamespace(pod.namespace())
          .withName(pod.name())
          .evict(
              new EvictionBuilder()
                  .withNewMetadata()
                  .withName(pod.name())
                  .withNamespace(pod.namespace())
                  .endMetadata()
                  .withDeleteOptions(
                      new io.fabric8.kubernetes.api.model.DeleteOptionsBuilder()
                          .withNewPreconditions()
                          .withUid(pod.uid())
                          .endPreconditions()
                          .build())
                  .build());
      LOG.info("pod_evicted pod={} uid={} reason=\"{}\"", pod, pod.uid(), reason);
    } catch (KubernetesClientException e) {
      LOG.warn("evict_failed pod={} uid={} error={}", pod, pod.uid(), e.getMessage());
    }
  }
}
