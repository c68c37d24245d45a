package io.kse.extender.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kse.extender.filter.FilterService;
import io.kse.extender.filter.FilterVerdict;
import io.kse.extender.log.Untrusted;
import io.kse.extender.wire.BadExtenderRequestException;
import io.kse.extender.wire.FilterRequest;
import io.kse.extender.wire.FilterResponse;
import io.kse.extender.wire.PodRef;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BooleanSupplier;
import java.util.function.IntSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * filter, prioritize and preempt: each decided from memory by {@link FilterService}, so Slurm's
 * allocation is the only node that passes.
 */
final class FilterRoutes {
  private static final Logger LOG = LoggerFactory.getLogger(FilterRoutes.class);
  private static final ObjectMapper JSON = new ObjectMapper();

  static final String NOT_SYNCED =
      "kse: starting up, the Slurm job cache or the pod informer is not synced yet; retry";

  /** Deleted pods never say goodbye here; forgetting everything now and then bounds the map. */
  static final int MAX_REMEMBERED_VERDICTS = 50_000;

  private final FilterService filter;
  private final BooleanSupplier synced;
  private final IntSupplier maxNodeNames;

  /** Last reason logged per pod UID, so a retried filter call logs only when its answer changes. */
  private final Map<String, String> lastVerdict = new ConcurrentHashMap<>();

  FilterRoutes(FilterService filter, BooleanSupplier synced, IntSupplier maxNodeNames) {
    this.filter = filter;
    this.synced = synced;
    this.maxNodeNames = maxNodeNames;
  }

  VerbRunner.Answer filter(byte[] body) {
    FilterRequest req = FilterRequest.parse(body, maxNodeNames.getAsInt());
    if (!synced.getAsBoolean()) {
      // an answer from half a picture would park the pod as unschedulable: ask for a retry
      return new VerbRunner.Answer(FilterResponse.error(NOT_SYNCED), "not_synced");
    }
    FilterVerdict v = filter.filter(req);
    byte[] out = FilterResponse.write(req, v.passing(), v.reason(), false);
    // one INFO line per decision change, not per retried call
    if (lastVerdict.size() > MAX_REMEMBERED_VERDICTS) {
      lastVerdict.clear(); // at worst one extra log line per pod
    }
    if (!v.reason().equals(lastVerdict.put(req.pod().uid(), v.reason()))) {
      LOG.info(
          "filter pod={} uid={} verdict={} passing={} reason=\"{}\"",
          Untrusted.text(req.pod().toString()),
          Untrusted.text(req.pod().uid()),
          v.code(),
          v.passing(),
          Untrusted.text(v.reason()));
    }
    return new VerbRunner.Answer(out, v.code());
  }

  VerbRunner.Answer prioritize(byte[] body) {
    FilterRequest req = FilterRequest.parse(body, maxNodeNames.getAsInt());
    FilterVerdict v = filter.filter(req);
    ArrayNode out = JSON.createArrayNode();
    for (String n : req.nodeNames()) {
      out.addObject().put("Host", n).put("Score", v.passing().contains(n) ? 10 : 0);
    }
    return new VerbRunner.Answer(Responses.utf8(out.toString()), v.code());
  }

  /**
   * Kubernetes-side preemption may evict pods only on the node Slurm allocated to the preemptor;
   * every other candidate node is vetoed, so nothing unrelated is evicted for a pod waiting on
   * Slurm.
   */
  VerbRunner.Answer preempt(byte[] body) {
    JsonNode args = tree(body, "ExtenderPreemptionArgs");
    JsonNode pod = args.path("Pod");
    if (!pod.isObject()) {
      throw new BadExtenderRequestException("ExtenderPreemptionArgs.Pod is missing");
    }
    // the filter decision needs only who the pod is and which nodes are candidates
    JsonNode meta = pod.path("metadata");
    PodRef ref =
        new PodRef(
            string(meta, "namespace", "default"),
            string(meta, "name", ""),
            string(meta, "uid", ""));
    if (ref.name().isEmpty() || ref.uid().isEmpty()) {
      throw new BadExtenderRequestException(
          "ExtenderPreemptionArgs.Pod has no metadata.uid or metadata.name");
    }
    JsonNode candidates =
        args.path("NodeNameToMetaVictims").isObject()
            ? args.path("NodeNameToMetaVictims")
            : args.path("NodeNameToVictims");
    int limit = maxNodeNames.getAsInt();
    if (candidates.size() > limit) {
      throw new BadExtenderRequestException(
          "ExtenderPreemptionArgs names "
              + candidates.size()
              + " candidate nodes, more than the "
              + limit
              + " this cluster can have");
    }
    FilterVerdict v =
        filter.filter(new FilterRequest(ref, "", Map.of(), names(candidates), Map.of(), false));
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

  private static List<String> names(JsonNode object) {
    List<String> out = new ArrayList<>();
    object.fieldNames().forEachRemaining(out::add);
    return out;
  }

  /** A string field, or a clear error naming it when it holds anything but a string. */
  static String string(JsonNode n, String field, String absent) {
    JsonNode v = n.get(field);
    if (v == null || v.isNull()) {
      return absent;
    }
    if (!v.isTextual()) {
      throw new BadExtenderRequestException(
          field + " must be a string, found " + v.getNodeType().name().toLowerCase());
    }
    return v.asText();
  }

  static JsonNode tree(byte[] body, String what) {
    try {
      JsonNode n = JSON.readTree(body);
      if (n == null || !n.isObject()) {
        throw new BadExtenderRequestException(what + " must be a JSON object");
      }
      return n;
    } catch (IOException e) {
      throw new BadExtenderRequestException(
          what + " is not valid JSON: " + e.getMessage().lines().findFirst().orElse(""));
    }
  }
}
