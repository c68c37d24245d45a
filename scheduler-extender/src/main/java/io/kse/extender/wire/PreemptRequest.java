package io.kse.extender.wire;

import com.fasterxml.jackson.databind.JsonNode;
import io.kse.extender.k8s.PodRef;
import java.util.ArrayList;
import java.util.List;

/**
 * kube-scheduler's {@code ExtenderPreemptionArgs}: the preemptor and its candidate nodes with their
 * victims ({@code NodeNameToMetaVictims} when the extender is node-cache capable, else {@code
 * NodeNameToVictims}), kept as read so the answer can return them.
 */
public record PreemptRequest(PodRef pod, JsonNode candidates) {
  public static PreemptRequest parse(byte[] body, int maxNodes) {
    JsonNode args = WireJson.object(body, "ExtenderPreemptionArgs");
    JsonNode pod = args.path("Pod");
    if (!pod.isObject()) {
      throw new BadExtenderRequestException("ExtenderPreemptionArgs.Pod is missing");
    }
    // the filter decision needs only who the pod is and which nodes are candidates
    JsonNode meta = pod.path("metadata");
    PodRef ref =
        new PodRef(
            WireJson.string(meta, "namespace", "default"),
            WireJson.string(meta, "name", ""),
            WireJson.string(meta, "uid", ""));
    if (ref.name().isEmpty() || ref.uid().isEmpty()) {
      throw new BadExtenderRequestException(
          "ExtenderPreemptionArgs.Pod has no metadata.uid or metadata.name");
    }
    JsonNode candidates =
        args.path("NodeNameToMetaVictims").isObject()
            ? args.path("NodeNameToMetaVictims")
            : args.path("NodeNameToVictims");
    if (candidates.size() > maxNodes) {
      throw new BadExtenderRequestException(
          "ExtenderPreemptionArgs names "
              + candidates.size()
              + " candidate nodes, more than the "
              + maxNodes
              + " this cluster can have");
    }
    return new PreemptRequest(ref, candidates);
  }

  /** The candidate nodes' names, in request order. */
  public List<String> nodeNames() {
    List<String> out = new ArrayList<>();
    candidates.fieldNames().forEachRemaining(out::add);
    return out;
  }
}
