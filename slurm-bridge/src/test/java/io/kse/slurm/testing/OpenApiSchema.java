package io.kse.slurm.testing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * A strict validator for the subset of OpenAPI 3.0 that slurmrestd's documents use ($ref, object
 * properties, arrays, scalar types, enums). Strict: a key the schema does not declare is an error,
 * because slurmrestd itself rejects unknown keys ("Unknown key").
 */
public final class OpenApiSchema {
  private static final ObjectMapper JSON = new ObjectMapper();
  private final JsonNode doc;

  private OpenApiSchema(JsonNode doc) {
    this.doc = doc;
  }

  /**
   * The document for a version, saved in the repository ({@code src/test/resources/openapi/}): the
   * ones the project's Slurm versions serve, written by their live slurmrestd, and Slurm 25.11's.
   */
  public static OpenApiSchema forVersion(String versionId) {
    Path dir = Path.of("src/test/resources/openapi");
    if (!Files.isDirectory(dir)) {
      dir = Path.of("slurm-bridge/src/test/resources/openapi");
    }
    try (var files = Files.list(dir)) {
      Path file =
          files
              .filter(p -> p.getFileName().toString().startsWith("openapi-" + versionId + "-"))
              .findFirst()
              .orElseThrow(() -> new IllegalStateException("no OpenAPI file for " + versionId));
      return new OpenApiSchema(JSON.readTree(file.toFile()));
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  /** Problems of {@code body} as the JSON request body of {@code method path}. */
  public List<String> validateRequest(String method, String path, JsonNode body) {
    JsonNode op = operation(method, path);
    JsonNode schema =
        op.path("requestBody").path("content").path("application/json").path("schema");
    if (schema.isMissingNode()) {
      return List.of(method + " " + path + " declares no JSON request body");
    }
    List<String> problems = new ArrayList<>();
    check(schema, body, "$", problems);
    return problems;
  }

  /** Problems of {@code body} as the 200 response of {@code method path}. */
  public List<String> validateResponse(String method, String path, JsonNode body) {
    JsonNode op = operation(method, path);
    JsonNode schema =
        op.path("responses").path("200").path("content").path("application/json").path("schema");
    List<String> problems = new ArrayList<>();
    check(schema, body, "$", problems);
    return problems;
  }

  private JsonNode operation(String method, String path) {
    JsonNode op = doc.path("paths").path(path).path(method.toLowerCase());
    if (op.isMissingNode()) {
      throw new IllegalArgumentException("the OpenAPI document has no " + method + " " + path);
    }
    return op;
  }

  private JsonNode resolve(JsonNode schema) {
    while (schema.has("$ref")) {
      String ref = schema.get("$ref").asText();
      JsonNode target = doc;
      for (String part : ref.substring(2).split("/")) {
        target = target.path(part.replace("~1", "/").replace("~0", "~"));
      }
      if (target.isMissingNode()) {
        throw new IllegalStateException("unresolvable $ref " + ref);
      }
      schema = target;
    }
    return schema;
  }

  private void check(JsonNode schema, JsonNode value, String where, List<String> problems) {
    schema = resolve(schema);
    // some 22.05 schemas declare properties without "type": "object"
    String type = schema.path("type").asText(schema.has("properties") ? "object" : "");
    if (value.isNull()) {
      if (!schema.path("nullable").asBoolean(false)) {
        problems.add(where + ": null is not allowed");
      }
      return;
    }
    switch (type) {
      case "object" -> checkObject(schema, value, where, problems);
      case "array" -> {
        if (!value.isArray()) {
          problems.add(where + ": expected an array, got " + value.getNodeType());
          return;
        }
        for (int i = 0; i < value.size(); i++) {
          check(schema.path("items"), value.get(i), where + "[" + i + "]", problems);
        }
      }
      case "string" -> {
        if (!value.isTextual()) {
          problems.add(where + ": expected a string, got " + value.getNodeType());
        } else if (schema.has("enum") && !contains(schema.get("enum"), value.asText())) {
          problems.add(where + ": '" + value.asText() + "' is not one of " + schema.get("enum"));
        }
      }
      case "integer" -> {
        if (!value.isIntegralNumber()) {
          problems.add(where + ": expected an integer, got " + value.getNodeType());
        }
      }
      case "number" -> {
        if (!value.isNumber()) {
          problems.add(where + ": expected a number, got " + value.getNodeType());
        }
      }
      case "boolean" -> {
        if (!value.isBoolean()) {
          problems.add(where + ": expected a boolean, got " + value.getNodeType());
        }
      }
      default -> {
        // no type: anything goes
      }
    }
  }

  private void checkObject(JsonNode schema, JsonNode value, String where, List<String> problems) {
    if (!value.isObject()) {
      problems.add(where + ": expected an object, got " + value.getNodeType());
      return;
    }
    JsonNode props = schema.path("properties");
    JsonNode additional = schema.path("additionalProperties");
    for (Iterator<Map.Entry<String, JsonNode>> it = value.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> f = it.next();
      if (props.has(f.getKey())) {
        check(props.get(f.getKey()), f.getValue(), where + "." + f.getKey(), problems);
      } else if (additional.isObject()) {
        check(additional, f.getValue(), where + "." + f.getKey(), problems);
      } else if (!props.isMissingNode() && !additional.asBoolean(false)) {
        problems.add(where + ": unknown key '" + f.getKey() + "'");
      }
    }
    for (JsonNode req : schema.path("required")) {
      // slurmrestd 26.05 lists nested fields as "nodes/count" here: paths, not keys of this
      // object (its own live answers have no such key), so they name nothing to check
      if (!req.asText().contains("/") && !value.has(req.asText())) {
        problems.add(where + ": required key '" + req.asText() + "' is missing");
      }
    }
  }

  private static boolean contains(JsonNode values, String v) {
    for (JsonNode e : values) {
      if (e.asText().equals(v)) {
        return true;
      }
    }
    return false;
  }
}
