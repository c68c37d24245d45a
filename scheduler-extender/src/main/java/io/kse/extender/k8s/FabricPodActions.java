package io.kse.extender.k8s;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.api.model.ObjectReferenceBuilder;
import io.fabric8.kubernetes.api.model.policy.v1.EvictionBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.Clock;
import java.time.format.DateTimeFormatter;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link PodActions} through the API server. Failures are logged, never thrown: best effort. Events
 * are posted from a small queue of their own, so a burst of them never delays a wake-up or a
 * submission (time-to-bind waits on those, not on Events).
 */
public final class FabricPodActions implements PodActions, AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(FabricPodActions.class);
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String COMPONENT = "kube-slurm-extender";

  private static final int EVENT_QUEUE = 10_000;
  private static final String STRATEGIC = "application/strategic-merge-patch+json";
  private static final String MERGE = "application/merge-patch+json";

  private final KubernetesClient client;
  private final Clock clock;
  private final java.util.concurrent.ThreadPoolExecutor events =
      new java.util.concurrent.ThreadPoolExecutor(
          2,
          2,
          0,
          java.util.concurrent.TimeUnit.SECONDS,
          new java.util.concurrent.ArrayBlockingQueue<>(EVENT_QUEUE),
          io.kse.extender.concurrent.DaemonThreads.named("kse-events"),
          (r, pool) -> LOG.warn("event_dropped reason=queue_full size={}", EVENT_QUEUE));

  /**
   * For evictions: fabric8 retries an HTTP 429 (a disruption budget's "not now") with backoff for
   * about 20 s inside one call; the reconciler does its own backoff and must see the refusal.
   */
  private final KubernetesClient evictions;

  public FabricPodActions(KubernetesClient client, Clock clock) {
    this.client = client;
    this.clock = clock;
    this.evictions =
        KubeClients.build(
            new io.fabric8.kubernetes.client.ConfigBuilder(client.getConfiguration())
                .withRequestRetryBackoffLimit(0)
                .build());
  }

  @Override
  public void event(PodRef pod, EventReason reason, String message) {
    event(pod, reason, message, clock.instant());
  }

  @Override
  public void event(PodRef pod, EventReason reason, String message, java.time.Instant at) {
    events.execute(() -> post(pod, reason.warning(), reason.reason(), message, at));
  }

  /** Posts what is queued (up to a few seconds), then stops. */
  @Override
  public void close() {
    events.shutdown();
    try {
      events.awaitTermination(5, java.util.concurrent.TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    evictions.close();
  }

  private void post(
      PodRef pod, boolean warning, String reason, String message, java.time.Instant at) {
    String now =
        DateTimeFormatter.ISO_INSTANT.format(at.truncatedTo(java.time.temporal.ChronoUnit.SECONDS));
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
  public boolean wake(PodRef pod, String node, long jobId, WakeUp how) {
    // The UID precondition means no read and no conflict with kube-scheduler writing the same pod
    // (read-modify-write lost such races under load).
    ObjectNode body = JSON.createObjectNode();
    ObjectNode metadata = body.putObject("metadata").put("uid", pod.uid());
    metadata
        .putObject("annotations")
        .put(WellKnown.JOB_ANNOTATION, Long.toString(jobId))
        .put(WellKnown.NODE_ANNOTATION, node);
    try {
      if (how == WakeUp.UNGATE) {
        // one write: the annotations with the gate's lift (a spec change: the pod itself)
        patch(path(pod), STRATEGIC, liftGate(body).toString());
        return true;
      }
      // the status subresource takes metadata and status in one write (it resets only the spec):
      // the annotations (a pod update, which requeues a pod the filter rejected), nominatedNodeName
      // (kube-scheduler then filters that node alone first, so a woken pod costs the same at 50
      // and at 15,000 nodes: KEP-5278) and the Allocated condition. Strategic merge: conditions
      // merge by type.
      ObjectNode status = body.putObject("status").put("nominatedNodeName", node);
      status
          .putArray("conditions")
          .add(condition(true, "Allocated", "Slurm job " + jobId + " allocated " + node));
      try {
        patch(path(pod) + "/status", STRATEGIC, body.toString());
      } catch (KubernetesClientException e) {
        if (e.getCode() != 415) {
          throw e;
        }
        // a server that takes no strategic merge (fabric8's mock, some proxies): the same write as
        // a JSON merge patch, without the conditions, a list which that would replace whole
        status.remove("conditions");
        patch(path(pod) + "/status", MERGE, body.toString());
      }
      if (how.lifts()) {
        // after the nomination, so the scheduling attempt the lifted gate starts already sees it
        ungateOrThrow(pod);
      }
    } catch (KubernetesClientException e) {
      LOG.warn("wake_failed pod={} uid={} node={} error={}", pod, pod.uid(), node, e.getMessage());
      return e.getCode() == 404 || e.getCode() == 409; // gone or replaced: nothing to retry
    }
    return true;
  }

  @Override
  public void ungate(PodRef pod) {
    try {
      ungateOrThrow(pod);
    } catch (KubernetesClientException e) {
      LOG.warn("ungate_failed pod={} uid={} error={}", pod, pod.uid(), e.getMessage());
    }
  }

  // gated: lifting the gate is a spec change, which only a strategic-merge patch expresses
  // without replacing other controllers' gates
  private void ungateOrThrow(PodRef pod) {
    ObjectNode body = JSON.createObjectNode();
    body.putObject("metadata").put("uid", pod.uid());
    patch(path(pod), STRATEGIC, liftGate(body).toString());
  }

  /** Adds the removal of only our gate (schedulingGates merges by name; none: a no-op). */
  private static ObjectNode liftGate(ObjectNode body) {
    body.putObject("spec")
        .putArray("schedulingGates")
        .addObject()
        .put("name", WellKnown.SCHEDULING_GATE)
        .put("$patch", "delete");
    return body;
  }

  private static String path(PodRef pod) {
    return "api/v1/namespaces/" + pod.namespace() + "/pods/" + pod.name();
  }

  /**
   * One PATCH request (fabric8's resource DSL reads the object first), through the client's own
   * HTTP stack so authentication and TLS are the same.
   */
  private void patch(String path, String contentType, String body) {
    var http = client.getHttpClient();
    String base = client.getMasterUrl().toString();
    var request =
        http.newHttpRequestBuilder()
            .uri(base.endsWith("/") ? base + path : base + "/" + path)
            .method("PATCH", contentType, body)
            .build();
    try {
      var response =
          http.sendAsync(request, String.class).get(30, java.util.concurrent.TimeUnit.SECONDS);
      if (response.code() >= 300) {
        throw new KubernetesClientException(
            "PATCH " + path + ": HTTP " + response.code() + " " + response.body(),
            response.code(),
            null);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new KubernetesClientException("interrupted: PATCH " + path, e);
    } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
      throw new KubernetesClientException("PATCH " + path + " failed: " + e, e);
    }
  }

  @Override
  public EvictResult evict(PodRef pod, String reason) {
    try {
      boolean evicted =
          evictions
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
      if (!evicted) { // fabric8 answers false for HTTP 429: a disruption budget said no
        LOG.info("pod_eviction_blocked pod={} uid={} reason=\"{}\"", pod, pod.uid(), reason);
        return EvictResult.BLOCKED_BY_PDB;
      }
      LOG.info("pod_evicted pod={} uid={} reason=\"{}\"", pod, pod.uid(), reason);
      return EvictResult.EVICTED;
    } catch (KubernetesClientException e) {
      if (e.getCode() == 404 || e.getCode() == 409) {
        return EvictResult.GONE;
      }
      if (e.getCode() == 429) {
        return EvictResult.BLOCKED_BY_PDB;
      }
      LOG.warn("evict_failed pod={} uid={} error={}", pod, pod.uid(), e.getMessage());
      return EvictResult.FAILED;
    }
  }

  @Override
  public boolean delete(PodRef pod, String reason) {
    try {
      client
          .pods()
          .inNamespace(pod.namespace())
          .resource(
              new io.fabric8.kubernetes.api.model.PodBuilder()
                  .withNewMetadata()
                  .withName(pod.name())
                  .withNamespace(pod.namespace())
                  .withUid(pod.uid())
                  .endMetadata()
                  .build())
          .delete();
      LOG.info("pod_deleted pod={} uid={} reason=\"{}\"", pod, pod.uid(), reason);
      return true;
    } catch (KubernetesClientException e) {
      if (e.getCode() == 404 || e.getCode() == 409) {
        return true;
      }
      LOG.warn("delete_failed pod={} uid={} error={}", pod, pod.uid(), e.getMessage());
      return false;
    }
  }

  @Override
  public void condition(PodRef pod, boolean allocated, String reason, String message) {
    ObjectNode body = JSON.createObjectNode();
    body.putObject("metadata").put("uid", pod.uid());
    body.putObject("status").putArray("conditions").add(condition(allocated, reason, message));
    try {
      // strategic merge: conditions merge by type, so kube-scheduler's PodScheduled stays
      patch(path(pod) + "/status", STRATEGIC, body.toString());
    } catch (KubernetesClientException e) {
      LOG.debug("condition_failed pod={} uid={} error={}", pod, pod.uid(), e.getMessage());
    }
  }

  private ObjectNode condition(boolean allocated, String reason, String message) {
    return JSON.createObjectNode()
        .put("type", WellKnown.CONDITION)
        .put("status", allocated ? "True" : "False")
        .put("reason", reason)
        .put("message", message.length() > 1000 ? message.substring(0, 1000) : message)
        .put(
            "lastTransitionTime",
            DateTimeFormatter.ISO_INSTANT.format(
                clock.instant().truncatedTo(java.time.temporal.ChronoUnit.SECONDS)));
  }
}
