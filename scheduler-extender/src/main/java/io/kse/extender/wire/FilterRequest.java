package io.kse.extender.wire;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kse.extender.k8s.PodRef;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * kube-scheduler's {@code ExtenderArgs} (filter and prioritize), read with a streaming parser that
 * keeps only what the extender uses: the pod's identity, scheduler name and annotations, and the
 * candidate nodes. The rest of the pod (containers, managedFields…) is skipped unread.
 *
 * @param nodeNames candidates when {@code nodeCacheCapable: true}
 * @param nodes candidates as full Node objects when {@code nodeCacheCapable: false}, by name, in
 *     request order (kept whole: the response must return them)
 * @param fullNodes true when the request carried {@code Nodes} rather than {@code NodeNames}
 */
public record FilterRequest(
    PodRef pod,
    String schedulerName,
    Map<String, String> annotations,
    List<String> nodeNames,
    Map<String, JsonNode> nodes,
    boolean fullNodes) {

  private static final JsonFactory JSON = new JsonFactory();
  private static final ObjectMapper MAPPER = new ObjectMapper();

  /** Parses a request body; a {@link BadExtenderRequestException} names what is wrong. */
  public static FilterRequest parse(byte[] body) {
    return parse(body, Integer.MAX_VALUE);
  }

  /**
   * As {@link #parse(byte[])}, refusing a request that names more than {@code maxNodes} candidate
   * nodes as soon as it does (so neither the parse nor the answer grows with a caller's list).
   */
  public static FilterRequest parse(byte[] body, int maxNodes) {
    try (JsonParser p = JSON.createParser(body)) {
      return read(p, maxNodes);
    } catch (IOException e) {
      throw new BadExtenderRequestException(
          "ExtenderArgs is not valid JSON: " + firstLine(e.getMessage()), e);
    }
  }

  private static FilterRequest read(JsonParser p, int maxNodes) throws IOException {
    if (p.nextToken() != JsonToken.START_OBJECT) {
      throw new BadExtenderRequestException("ExtenderArgs must be a JSON object");
    }
    PodFields pod = null;
    List<String> names = null;
    Map<String, JsonNode> nodes = null;
    while (p.nextToken() == JsonToken.FIELD_NAME) {
      String field = p.currentName();
      JsonToken t = p.nextToken();
      // Go decodes keys case-insensitively; senders other than kube-scheduler may lower-case them
      switch (field.toLowerCase(java.util.Locale.ROOT)) {
        case "pod" -> pod = t == JsonToken.VALUE_NULL ? null : readPod(p);
        case "nodenames" ->
            names = t == JsonToken.VALUE_NULL ? null : readStrings(p, "NodeNames", maxNodes);
        case "nodes" -> nodes = t == JsonToken.VALUE_NULL ? null : readNodeList(p, maxNodes);
        default -> p.skipChildren();
      }
    }
    if (pod == null) {
      throw new BadExtenderRequestException("ExtenderArgs.Pod is missing");
    }
    if (pod.uid == null || pod.name == null) {
      throw new BadExtenderRequestException(
          "ExtenderArgs.Pod has no metadata.uid or metadata.name");
    }
    PodRef ref = new PodRef(pod.namespace == null ? "default" : pod.namespace, pod.name, pod.uid);
    if (names != null) {
      return new FilterRequest(ref, pod.schedulerName, pod.annotations, names, Map.of(), false);
    }
    if (nodes != null) {
      return new FilterRequest(
          ref, pod.schedulerName, pod.annotations, List.copyOf(nodes.keySet()), nodes, true);
    }
    throw new BadExtenderRequestException("ExtenderArgs has neither NodeNames nor Nodes");
  }

  private static final class PodFields {
    String namespace;
    String name;
    String uid;
    String schedulerName = "";
    Map<String, String> annotations = Map.of();
  }

  private static PodFields readPod(JsonParser p) throws IOException {
    expect(p, JsonToken.START_OBJECT, "ExtenderArgs.Pod");
    PodFields f = new PodFields();
    while (p.nextToken() == JsonToken.FIELD_NAME) {
      String field = p.currentName();
      JsonToken t = p.nextToken();
      if (field.equals("metadata") && t == JsonToken.START_OBJECT) {
        while (p.nextToken() == JsonToken.FIELD_NAME) {
          String m = p.currentName();
          JsonToken mt = p.nextToken();
          switch (m) {
            case "name" -> f.name = string(p, "ExtenderArgs.Pod.metadata.name");
            case "namespace" -> f.namespace = string(p, "ExtenderArgs.Pod.metadata.namespace");
            case "uid" -> f.uid = string(p, "ExtenderArgs.Pod.metadata.uid");
            case "annotations" ->
                f.annotations = mt == JsonToken.START_OBJECT ? readStringMap(p) : Map.of();
            default -> p.skipChildren();
          }
        }
      } else if (field.equals("spec") && t == JsonToken.START_OBJECT) {
        while (p.nextToken() == JsonToken.FIELD_NAME) {
          String s = p.currentName();
          p.nextToken();
          if (s.equals("schedulerName")) {
            String name = string(p, "ExtenderArgs.Pod.spec.schedulerName");
            f.schedulerName = name == null ? "" : name;
          } else {
            p.skipChildren();
          }
        }
      } else {
        p.skipChildren();
      }
    }
    return f;
  }

  /** A string or null; anything else is named as the problem (never read as a nested object). */
  private static String string(JsonParser p, String what) throws IOException {
    JsonToken t = p.currentToken();
    if (t == JsonToken.VALUE_NULL) {
      return null;
    }
    if (t != JsonToken.VALUE_STRING) {
      throw new BadExtenderRequestException(what + " must be a string, found " + t);
    }
    return p.getText();
  }

  private static List<String> readStrings(JsonParser p, String what, int max) throws IOException {
    expect(p, JsonToken.START_ARRAY, "ExtenderArgs." + what);
    List<String> out = new ArrayList<>();
    JsonToken t;
    while ((t = p.nextToken()) != JsonToken.END_ARRAY) {
      if (out.size() >= max) {
        throw tooMany(what, max);
      }
      if (t != JsonToken.VALUE_STRING) {
        throw new BadExtenderRequestException(
            "ExtenderArgs." + what + " must hold strings, found " + t);
      }
      out.add(p.getText());
    }
    return out;
  }

  private static Map<String, String> readStringMap(JsonParser p) throws IOException {
    Map<String, String> out = new HashMap<>();
    while (p.nextToken() == JsonToken.FIELD_NAME) {
      String k = p.currentName();
      p.nextToken();
      String v = string(p, "ExtenderArgs.Pod.metadata.annotations." + k);
      out.put(k, v == null ? "" : v);
    }
    return out;
  }

  private static BadExtenderRequestException tooMany(String what, int max) {
    return new BadExtenderRequestException(
        "ExtenderArgs." + what + " names more than " + max + " nodes, more than this cluster has");
  }

  private static Map<String, JsonNode> readNodeList(JsonParser p, int max) throws IOException {
    expect(p, JsonToken.START_OBJECT, "ExtenderArgs.Nodes");
    Map<String, JsonNode> out = new LinkedHashMap<>();
    while (p.nextToken() == JsonToken.FIELD_NAME) {
      String field = p.currentName();
      JsonToken t = p.nextToken();
      if (field.equals("items") && t == JsonToken.START_ARRAY) {
        while (p.nextToken() == JsonToken.START_OBJECT) {
          if (out.size() >= max) {
            throw tooMany("Nodes.items", max);
          }
          JsonNode node = MAPPER.readTree(p);
          String name = node.path("metadata").path("name").asText("");
          if (name.isEmpty()) {
            throw new BadExtenderRequestException(
                "ExtenderArgs.Nodes.items has a node without metadata.name");
          }
          out.put(name, node);
        }
      } else {
        p.skipChildren();
      }
    }
    return out;
  }

  private static String firstLine(String s) {
    return s == null ? "" : s.lines().findFirst().orElse("");
  }

  private static void expect(JsonParser p, JsonToken want, String what) {
    if (p.currentToken() != want) {
      throw new BadExtenderRequestException(
          what
              + " must be "
              + (want == JsonToken.START_ARRAY ? "an array" : "an object")
              + ", found "
              + p.currentToken());
    }
  }
}
