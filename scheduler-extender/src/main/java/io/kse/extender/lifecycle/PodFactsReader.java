package io.kse.extender.lifecycle;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.Pod;
import io.kse.extender.dra.ClaimProblem;
import io.kse.extender.dra.GpuClaims;
import io.kse.policy.PodFacts;
import io.kse.policy.PodManifest;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The one place a pod becomes the policy's facts: its manifest, and the GPUs its ResourceClaims
 * ask. The submitter, {@code /explain}, the preemption attribution's tier lookup and the shape
 * check all read pods here, so none of them can see a pod differently from what was submitted.
 */
public final class PodFactsReader {
  private static final ObjectMapper JSON = new ObjectMapper();

  /** A pod's GPUs never change (its requests and its claims' specs are immutable): kept by UID. */
  private static final int MAX_REMEMBERED = 100_000;

  private final GpuClaims gpuClaims;
  private final Map<String, Long> gpusByUid = new ConcurrentHashMap<>();

  public PodFactsReader(GpuClaims gpuClaims) {
    this.gpuClaims = gpuClaims;
  }

  /**
   * The pod as the policy sees it; {@link ClaimProblem} when its claims cannot be served, {@link
   * PodManifest.Unreadable} when its manifest cannot be read.
   */
  public PodFacts facts(Pod pod) {
    GpuClaims.Asks asks = gpuClaims.asks(pod);
    return PodManifest.facts(JSON.valueToTree(pod))
        .withDraGpus(asks.gpus())
        .withDraGpuShares(asks.shares())
        .withDraMigDevices(asks.mig());
  }

  /**
   * The GPUs per node the pod asks (device plugin and ResourceClaims); 0 when it cannot be read —
   * the submitter then refuses it with the reason, so no shape is decided on it.
   */
  public long gpus(Pod pod) {
    String uid = pod.getMetadata().getUid();
    Long known = uid == null ? null : gpusByUid.get(uid);
    if (known != null) {
      return known;
    }
    long gpus;
    try {
      gpus = facts(pod).gpus();
    } catch (ClaimProblem | PodManifest.Unreadable e) {
      return 0; // not remembered: a claim may be created later
    }
    if (uid != null) {
      if (gpusByUid.size() >= MAX_REMEMBERED) {
        gpusByUid.clear();
      }
      gpusByUid.put(uid, gpus);
    }
    return gpus;
  }

  /** The pod is gone: nothing to remember. */
  public void forget(String uid) {
    gpusByUid.remove(uid);
  }
}
