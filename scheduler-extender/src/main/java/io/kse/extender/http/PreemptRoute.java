package io.kse.extender.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kse.extender.filter.FilterService;
import io.kse.extender.filter.FilterVerdict;
import io.kse.extender.k8s.PodRef;
import io.kse.extender.wire.FilterRequest;
import io.kse.extender.wire.PreemptRequest;
import java.util.Map;
import java.util.function.IntSupplier;

/** preempt: decided from memory by {@link FilterService}, like filter. */
final class PreemptRoute {
  private static final ObjectMapper JSON = new ObjectMapper();

  private final FilterService filter;
  private final IntSupplier maxNodeNames;

  PreemptRoute(FilterService filter, IntSupplier maxNodeNames) {
    this.filter = filter;
    this.maxNodeNames = maxNodeNames;
  }

  /**
   * Kubernetes-side preemption may evict pods only on the node Slurm allocated to the preemptor;
   * every other candidate node is vetoed, so nothing unrelated is evicted for a pod waiting on
   * Slurm.
   */
  VerbRunner.Answer preempt(byte[] body) {
    PreemptRequest req = PreemptRequest.parse(body, maxNodeNames.getAsInt());
    PodRef ref = req.pod();
    JsonNode candidates = req.candidates();
    FilterVerdict v =
        filter.filter(new FilterRequest(ref, "", Map.of(), req.nodeNames(), Map.of(), false));
    ObjectNode result = JSON.createObjectNode();
    ObjectNode victims = result.putObject("NodeNameToMetaVictims");
    for (String node : v.passing()) {
      JsonNode c = candidates.path(node);
      ObjectNode out = victims.putObject(node);
      ArrayNode pods = out.putArray("Pods");
      for (JsonNode p : c.path("Pods")) {
        String uid =
            p.has("UID") ? p.path("UID").asText() : p.path("metadata").path("uid").asText();
        pods.addObject().put("UID", uid);
      }
      out.put("NumPDBViolations", c.path("NumPDBViolations").asLong(0));
    }
    return new VerbRunner.Answer(
        Responses.utf8(result.toString()),
        v.passing().isEmpty() ? "vetoed" : "allocated_node_only");
  }
}
