package io.kse.policy.replay;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.Reader;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * A {@link Trace} as JSON lines. The first line is the header, {@code {"kind":"header",
 * "version":1, "start":"2026-11-20T00:00:00Z", "lengthSeconds":86400, "source":"synthetic",
 * "seed":7}}; then one event per line: {@code {"kind":"inference", "atSeconds":12.5, "id":
 * "serving/llm-0", "namespace":"serving", "gpus":8, "nodes":1, "lifetimeSeconds":1800, "labels":{},
 * "annotations":{}, "priorityClassName":"inference"}} or {@code {"kind":"slurm", "atSeconds":3,
 * "id":"4711", "user":"alice", "account":"research", "partition":"training", "qos":"normal",
 * "nodes":4, "gpusPerNode":8, "runtimeSeconds":7200, "requeue":true}}. Times are seconds from the
 * trace's start. Unknown keys are refused, so a misspelt one is not silently ignored; every error
 * names its line.
 */
public final class TraceCodec {
  private static final ObjectMapper JSON = new ObjectMapper();

  private TraceCodec() {}

  /** Thrown for a trace that cannot be read; the message names the line and the field. */
  public static final class TraceException extends RuntimeException {
    TraceException(String message) {
      super(message);
    }
  }

  public static void write(Trace t, Writer out) {
    try {
      ObjectNode h = JSON.createObjectNode();
      h.put("kind", "header");
      h.put("version", t.header().version());
      h.put("start", t.header().start().toString());
      h.put("lengthSeconds", seconds(t.header().length()));
      h.put("source", t.header().source());
      t.header().seed().ifPresent(s -> h.put("seed", s));
      line(out, h);
      // one stream ordered by time, as a recorder writes it
      int i = 0;
      int j = 0;
      List<Trace.Inference> inf = t.inference();
      List<Trace.SlurmJob> jobs = t.slurmJobs();
      while (i < inf.size() || j < jobs.size()) {
        if (j >= jobs.size()
            || i < inf.size() && inf.get(i).at().compareTo(jobs.get(j).at()) <= 0) {
          line(out, inference(inf.get(i++)));
        } else {
          line(out, slurm(jobs.get(j++)));
        }
      }
      out.flush();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  public static Trace read(Reader in) {
    List<String> lines;
    try (BufferedReader r = new BufferedReader(in)) {
      lines = r.lines().toList();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    Trace.Header header = null;
    List<Trace.Inference> inference = new ArrayList<>();
    List<Trace.SlurmJob> jobs = new ArrayList<>();
    Set<String> ids = new HashSet<>();
    for (int n = 1; n <= lines.size(); n++) {
      String text = lines.get(n - 1).strip();
      if (text.isEmpty()) {
        continue;
      }
      Line l = new Line(n, parse(n, text));
      String kind = l.text("kind");
      if (header == null && !kind.equals("header")) {
        throw l.problem("kind", "the first line must be the header, got \"" + kind + "\"");
      }
      switch (kind) {
        case "header" -> {
          if (header != null) {
            throw l.problem("kind", "a second header");
          }
          header = header(l);
        }
        case "inference" -> inference.add(inference(l, header, ids));
        case "slurm" -> jobs.add(slurm(l, header, ids));
        default ->
            throw l.problem("kind", "expected header, inference or slurm, got \"" + kind + "\"");
      }
      l.noOtherKeys();
    }
    if (header == null) {
      throw new TraceException("trace: empty (no header line)");
    }
    return new Trace(header, inference, jobs);
  }

  private static Trace.Header header(Line l) {
    l.allow("kind", "version", "start", "lengthSeconds", "source", "seed");
    int version = (int) l.whole("version", 1, 1_000);
    if (version != Trace.VERSION) {
      throw l.problem(
          "version", "this kse-policy reads version " + Trace.VERSION + ", got " + version);
    }
    Instant start;
    try {
      start = Instant.parse(l.text("start"));
    } catch (DateTimeParseException e) {
      throw l.problem("start", "expected an instant like 2026-11-20T00:00:00Z");
    }
    Optional<Long> seed =
        l.node.has("seed")
            ? Optional.of(l.whole("seed", Long.MIN_VALUE, Long.MAX_VALUE))
            : Optional.empty();
    return new Trace.Header(
        version, start, l.duration("lengthSeconds", false), l.text("source"), seed);
  }

  private static Trace.Inference inference(Line l, Trace.Header h, Set<String> ids) {
    l.allow(
        "kind",
        "atSeconds",
        "id",
        "namespace",
        "labels",
        "annotations",
        "priorityClassName",
        "gpus",
        "nodes",
        "lifetimeSeconds");
    Duration at = l.at(h);
    return new Trace.Inference(
        at,
        l.id(ids),
        l.text("namespace"),
        l.strings("labels"),
        l.strings("annotations"),
        l.node.has("priorityClassName")
            ? Optional.of(l.text("priorityClassName"))
            : Optional.empty(),
        l.whole("gpus", 0, 1_024),
        (int) l.whole("nodes", 1, 100_000),
        l.duration("lifetimeSeconds", false));
  }

  private static Trace.SlurmJob slurm(Line l, Trace.Header h, Set<String> ids) {
    l.allow(
        "kind",
        "atSeconds",
        "id",
        "user",
        "account",
        "partition",
        "qos",
        "nodes",
        "gpusPerNode",
        "runtimeSeconds",
        "requeue");
    Duration at = l.at(h);
    JsonNode requeue = l.node.path("requeue");
    if (!requeue.isMissingNode() && !requeue.isBoolean()) {
      throw l.problem("requeue", "expected true or false");
    }
    return new Trace.SlurmJob(
        at,
        l.id(ids),
        l.text("user"),
        l.text("account"),
        l.text("partition"),
        l.node.has("qos") ? Optional.of(l.text("qos")) : Optional.empty(),
        (int) l.whole("nodes", 1, 100_000),
        (int) l.whole("gpusPerNode", 0, 1_024),
        l.duration("runtimeSeconds", false),
        requeue.asBoolean(true));
  }

  private static ObjectNode inference(Trace.Inference i) {
    ObjectNode o = JSON.createObjectNode();
    o.put("kind", "inference");
    o.put("atSeconds", seconds(i.at()));
    o.put("id", i.id());
    o.put("namespace", i.namespace());
    o.set("labels", JSON.valueToTree(new java.util.TreeMap<>(i.labels())));
    o.set("annotations", JSON.valueToTree(new java.util.TreeMap<>(i.annotations())));
    i.priorityClassName().ifPresent(p -> o.put("priorityClassName", p));
    o.put("gpus", i.gpus());
    o.put("nodes", i.nodes());
    o.put("lifetimeSeconds", seconds(i.lifetime()));
    return o;
  }

  private static ObjectNode slurm(Trace.SlurmJob j) {
    ObjectNode o = JSON.createObjectNode();
    o.put("kind", "slurm");
    o.put("atSeconds", seconds(j.at()));
    o.put("id", j.id());
    o.put("user", j.user());
    o.put("account", j.account());
    o.put("partition", j.partition());
    j.qos().ifPresent(q -> o.put("qos", q));
    o.put("nodes", j.nodes());
    o.put("gpusPerNode", j.gpusPerNode());
    o.put("runtimeSeconds", seconds(j.runtime()));
    o.put("requeue", j.requeue());
    return o;
  }

  private static double seconds(Duration d) {
    return d.toMillis() / 1000.0;
  }

  private static void line(Writer out, ObjectNode o) throws IOException {
    out.write(JSON.writeValueAsString(o));
    out.write('\n');
  }

  private static JsonNode parse(int n, String text) {
    try {
      JsonNode node = JSON.readTree(text);
      if (node == null || !node.isObject()) {
        throw new TraceException("trace line " + n + ": expected a JSON object");
      }
      return node;
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new TraceException("trace line " + n + ": not JSON (" + e.getOriginalMessage() + ")");
    }
  }

  /** One line's object, with the checks every field gets. */
  private static final class Line {
    final int n;
    final JsonNode node;
    final Set<String> allowed = new HashSet<>();

    Line(int n, JsonNode node) {
      this.n = n;
      this.node = node;
    }

    TraceException problem(String field, String what) {
      return new TraceException("trace line " + n + ": " + field + ": " + what);
    }

    void allow(String... keys) {
      allowed.addAll(List.of(keys));
    }

    void noOtherKeys() {
      for (Iterator<String> it = node.fieldNames(); it.hasNext(); ) {
        String k = it.next();
        if (!allowed.contains(k)) {
          throw problem(
              k, "unknown key (expected one of " + new java.util.TreeSet<>(allowed) + ")");
        }
      }
    }

    String text(String field) {
      JsonNode v = node.path(field);
      if (!v.isTextual() || v.asText().isBlank()) {
        throw problem(field, "expected a non-empty string");
      }
      return v.asText();
    }

    long whole(String field, long min, long max) {
      JsonNode v = node.path(field);
      if (!v.canConvertToExactIntegral() || !v.isNumber()) {
        throw problem(field, "expected a whole number");
      }
      long x = v.asLong();
      if (x < min || x > max) {
        throw problem(field, "expected " + min + " to " + max + ", got " + x);
      }
      return x;
    }

    Duration duration(String field, boolean zeroAllowed) {
      JsonNode v = node.path(field);
      if (!v.isNumber() || !Double.isFinite(v.asDouble()) || v.asDouble() < 0) {
        throw problem(field, "expected seconds, a number ≥ 0");
      }
      Duration d = Duration.ofMillis(Math.round(v.asDouble() * 1000));
      if (!zeroAllowed && d.isZero()) {
        throw problem(field, "expected more than 0 seconds");
      }
      return d;
    }

    Duration at(Trace.Header h) {
      Duration at = duration("atSeconds", true);
      if (at.compareTo(h.length()) > 0) {
        throw problem(
            "atSeconds", "after the trace's end (lengthSeconds " + seconds(h.length()) + ")");
      }
      return at;
    }

    String id(Set<String> ids) {
      String id = text("id");
      if (!ids.add(id)) {
        throw problem("id", "\"" + id + "\" appears twice");
      }
      return id;
    }

    Map<String, String> strings(String field) {
      JsonNode v = node.path(field);
      if (v.isMissingNode()) {
        return Map.of();
      }
      if (!v.isObject()) {
        throw problem(field, "expected an object of strings");
      }
      Map<String, String> out = new LinkedHashMap<>();
      for (Iterator<Map.Entry<String, JsonNode>> it = v.fields(); it.hasNext(); ) {
        Map.Entry<String, JsonNode> e = it.next();
        if (!e.getValue().isTextual()) {
          throw problem(field + "." + e.getKey(), "expected a string");
        }
        out.put(e.getKey(), e.getValue().asText());
      }
      return out;
    }
  }
}
