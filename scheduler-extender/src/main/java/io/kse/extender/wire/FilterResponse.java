package io.kse.extender.wire;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Map;

/**
 * kube-scheduler's {@code ExtenderFilterResult}, written with every key present (Go's encoder never
 * omits them, and the decoder treats a missing list as "no node passes"). Passing nodes go in
 * {@code NodeNames} or, for a {@code nodeCacheCapable: false} request, as full objects in {@code
 * Nodes}. All other candidates carry one stable reason in {@code FailedAndUnresolvableNodes} (no
 * Kubernetes preemption can help) or {@code FailedNodes}.
 */
public final class FilterResponse {
  private static final JsonFactory JSON = new JsonFactory(new ObjectMapper());

  private FilterResponse() {}

  /**
   * @param passing names of the nodes that pass
   * @param reason the reason given for every other candidate
   * @param resolvable whether Kubernetes preemption could make the rejected nodes fit
   */
  public static byte[] write(
      FilterRequest req, List<String> passing, String reason, boolean resolvable) {
    ByteArrayOutputStream out =
        new ByteArrayOutputStream(64 + req.nodeNames().size() * (reason.length() + 24));
    try (JsonGenerator g = JSON.createGenerator(out)) {
      g.writeStartObject();
      if (req.fullNodes()) {
        g.writeObjectFieldStart("Nodes");
        g.writeStringField("apiVersion", "v1");
        g.writeStringField("kind", "NodeList");
        g.writeObjectFieldStart("metadata");
        g.writeEndObject();
        g.writeArrayFieldStart("items");
        for (String n : passing) {
          JsonNode node = req.nodes().get(n);
          if (node != null) {
            g.writeTree(node);
          }
        }
        g.writeEndArray();
        g.writeEndObject();
        g.writeNullField("NodeNames");
      } else {
        g.writeNullField("Nodes");
        g.writeArrayFieldStart("NodeNames");
        for (String n : passing) {
          g.writeString(n);
        }
        g.writeEndArray();
      }
      writeFailures(g, "FailedNodes", req, passing, reason, resolvable);
      writeFailures(g, "FailedAndUnresolvableNodes", req, passing, reason, !resolvable);
      g.writeStringField("Error", "");
      g.writeEndObject();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out.toByteArray();
  }

  private static void writeFailures(
      JsonGenerator g,
      String field,
      FilterRequest req,
      List<String> passing,
      String reason,
      boolean here)
      throws IOException {
    g.writeObjectFieldStart(field);
    if (here) {
      for (String n : req.nodeNames()) {
        if (!passing.contains(n)) {
          g.writeStringField(n, reason);
        }
      }
    }
    g.writeEndObject();
  }

  /**
   * A filter call that could not be decided: HTTP 200 with {@code Error} set, so kube-scheduler
   * shows it.
   */
  public static byte[] error(String message) {
    try {
      Map<String, Object> m = new java.util.LinkedHashMap<>();
      m.put("Nodes", null);
      m.put("NodeNames", null);
      m.put("FailedNodes", Map.of());
      m.put("FailedAndUnresolvableNodes", Map.of());
      m.put("Error", message);
      return new ObjectMapper().writeValueAsBytes(m);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
