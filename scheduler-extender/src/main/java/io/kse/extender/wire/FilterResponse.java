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
    if (!req.fullNodes() && req.nodeNames().stream().allMatch(FilterResponse::plain)) {
      return writeNames(req.nodeNames(), passing, reason, resolvable);
    }
    return writeWithJackson(req, passing, reason, resolvable);
  }

  /**
   * The common case written straight into bytes: node names are DNS subdomains (no escaping), the
   * reason is quoted once. At 5,000 nodes this is most of the work of a filter call.
   */
  private static byte[] writeNames(
      List<String> names, List<String> passing, String reason, boolean resolvable) {
    byte[] quoted;
    try {
      quoted = QUOTER.writeValueAsBytes(reason);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    Bytes b = new Bytes(names.size() * (quoted.length + 20) + 128);
    b.ascii("{\"Nodes\":null,\"NodeNames\":[");
    for (int i = 0; i < passing.size(); i++) {
      b.ascii(i == 0 ? "\"" : ",\"").ascii(passing.get(i)).ascii("\"");
    }
    b.ascii("],\"FailedNodes\":");
    failures(b, names, passing, quoted, resolvable);
    b.ascii(",\"FailedAndUnresolvableNodes\":");
    failures(b, names, passing, quoted, !resolvable);
    b.ascii(",\"Error\":\"\"}");
    return b.toArray();
  }

  private static void failures(
      Bytes b, List<String> names, List<String> passing, byte[] quoted, boolean here) {
    b.ascii("{");
    if (here) {
      boolean first = true;
      for (String n : names) {
        if (passing.contains(n)) {
          continue;
        }
        b.ascii(first ? "\"" : ",\"").ascii(n).ascii("\":").raw(quoted);
        first = false;
      }
    }
    b.ascii("}");
  }

  /** A growable byte buffer without ByteArrayOutputStream's per-call locking. */
  private static final class Bytes {
    private byte[] buf;
    private int len;

    Bytes(int capacity) {
      buf = new byte[Math.max(64, capacity)];
    }

    private void room(int n) {
      if (len + n > buf.length) {
        buf = java.util.Arrays.copyOf(buf, Math.max(buf.length * 2, len + n));
      }
    }

    @SuppressWarnings(
        "deprecation") // getBytes(int, int, byte[], int): exact for ASCII, checked by plain()
    Bytes ascii(String s) {
      room(s.length());
      s.getBytes(0, s.length(), buf, len);
      len += s.length();
      return this;
    }

    Bytes raw(byte[] b) {
      room(b.length);
      System.arraycopy(b, 0, buf, len, b.length);
      len += b.length;
      return this;
    }

    byte[] toArray() {
      return java.util.Arrays.copyOf(buf, len);
    }
  }

  private static byte[] writeWithJackson(
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

  private static final ObjectMapper QUOTER = new ObjectMapper();

  /** Printable ASCII without quote or backslash: needs no JSON escaping. */
  private static boolean plain(String s) {
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c < 0x20 || c > 0x7e || c == '"' || c == '\\') {
        return false;
      }
    }
    return true;
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
