package io.kse.policy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;

/**
 * Pod facts from a Kubernetes Pod manifest (YAML or JSON text, or a parsed tree). Requests are
 * summed over containers, and init containers count at their maximum, as kube-scheduler does.
 */
public final class PodManifest {
  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

  /**
   * A pod manifest the policy cannot read (not a pod, no name, a quantity that is not one): a fact
   * about the pod, said with what is wrong. Named, so a caller refuses the pod for this and a bug
   * elsewhere is not mistaken for it.
   */
  public static final class Unreadable extends IllegalArgumentException {
    public Unreadable(String message, Throwable cause) {
      super(message, cause);
    }

    public Unreadable(String message) {
      super(message);
    }
  }

  private PodManifest() {}

  public static PodFacts parse(String text) {
    try {
      return facts(YAML.readTree(text));
    } catch (Unreadable e) {
      throw e;
    } catch (Exception e) {
      throw new Unreadable("not a YAML/JSON pod manifest: " + e.getMessage(), e);
    }
  }

  public static PodFacts facts(JsonNode pod) {
    if (pod == null || !pod.isObject() || !"Pod".equals(pod.path("kind").asText("Pod"))) {
      throw new Unreadable(
          "expected a Pod manifest (kind: Pod), got "
              + (pod == null ? "nothing" : pod.path("kind").asText(pod.getNodeType().toString())));
    }
    JsonNode meta = pod.path("metadata");
    JsonNode spec = pod.path("spec");
    String name = meta.path("name").asText("");
    if (name.isEmpty()) {
      throw new Unreadable("the pod has no metadata.name");
    }
    Resources sum = new Resources();
    spec.path("containers").forEach(c -> sum.add(requests(c)));
    Resources init = new Resources();
    spec.path("initContainers").forEach(c -> init.max(requests(c)));
    sum.max(init);
    Optional<String> owner = Optional.empty();
    for (JsonNode o : meta.path("ownerReferences")) {
      if (o.path("controller").asBoolean(false) || owner.isEmpty()) {
        owner = Optional.of(o.path("kind").asText() + "/" + o.path("name").asText());
      }
    }
    return new PodFacts(
        meta.path("namespace").asText("default"),
        name,
        meta.path("uid").asText(""),
        strings(meta.path("labels")),
        strings(meta.path("annotations")),
        Optional.ofNullable(spec.path("priorityClassName").textValue()).filter(s -> !s.isBlank()),
        spec.path("priority").canConvertToInt()
            ? OptionalInt.of(spec.path("priority").asInt())
            : OptionalInt.empty(),
        owner,
        sum.cpuMillis,
        sum.memoryBytes,
        sum.extended,
        spec.path("activeDeadlineSeconds").canConvertToLong()
            ? OptionalLong.of(spec.path("activeDeadlineSeconds").asLong())
            : OptionalLong.empty(),
        0,
        strings(spec.path("nodeSelector")),
        0);
  }

  /** Requests, falling back to limits per resource (Kubernetes defaults requests to limits). */
  private static Resources requests(JsonNode container) {
    Map<String, String> merged = new HashMap<>();
    container
        .path("resources")
        .path("limits")
        .fields()
        .forEachRemaining(f -> merged.put(f.getKey(), f.getValue().asText()));
    container
        .path("resources")
        .path("requests")
        .fields()
        .forEachRemaining(f -> merged.put(f.getKey(), f.getValue().asText()));
    Resources r = new Resources();
    merged.forEach(
        (k, v) -> {
          try {
            switch (k) {
              case "cpu" -> r.cpuMillis = Quantity.millis(v);
              case "memory" -> r.memoryBytes = Quantity.units(v);
              case "ephemeral-storage", "storage" -> {}
              default -> {
                if (k.contains("/") || k.startsWith("hugepages-")) {
                  r.extended.put(k, Quantity.units(v));
                }
              }
            }
          } catch (IllegalArgumentException e) { // Quantity's own refusal
            throw new Unreadable(
                "container "
                    + container.path("name").asText()
                    + " resource "
                    + k
                    + ": "
                    + e.getMessage(),
                e);
          }
        });
    return r;
  }

  private static Map<String, String> strings(JsonNode n) {
    Map<String, String> out = new LinkedHashMap<>();
    n.fields().forEachRemaining(f -> out.put(f.getKey(), f.getValue().asText()));
    return out;
  }

  private static final class Resources {
    long cpuMillis;
    long memoryBytes;
    final Map<String, Long> extended = new HashMap<>();

    void add(Resources o) {
      cpuMillis += o.cpuMillis;
      memoryBytes += o.memoryBytes;
      o.extended.forEach((k, v) -> extended.merge(k, v, Long::sum));
    }

    void max(Resources o) {
      cpuMillis = Math.max(cpuMillis, o.cpuMillis);
      memoryBytes = Math.max(memoryBytes, o.memoryBytes);
      o.extended.forEach((k, v) -> extended.merge(k, v, Math::max));
    }
  }
}
