package io.kse.extender;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.Optional;

/**
 * Settings from a YAML file of the same {@code KSE_*} keys as the environment, with the environment
 * winning: the file carries the deployment's defaults, an env var overrides one value.
 */
public final class ConfigSources {
  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

  private ConfigSources() {}

  /**
   * The file named by {@code --config FILE} or {@code KSE_CONFIG_FILE}, merged under {@code env}.
   */
  public static Map<String, String> merge(Optional<Path> file, Map<String, String> env) {
    Map<String, String> out = new HashMap<>();
    file.ifPresent(f -> out.putAll(read(f)));
    out.putAll(env);
    out.remove("KSE_CONFIG_FILE");
    return out;
  }

  static Map<String, String> read(Path file) {
    JsonNode root;
    try {
      root = YAML.readTree(Files.readString(file));
    } catch (IOException e) {
      throw new IllegalArgumentException(
          "config file " + file + ": cannot read it: " + e.getMessage(), e);
    }
    if (root == null || !root.isObject()) {
      throw new IllegalArgumentException(
          "config file " + file + ": expected a mapping of KSE_* settings");
    }
    Map<String, String> out = new HashMap<>();
    for (Iterator<Map.Entry<String, JsonNode>> it = root.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> e = it.next();
      if (!e.getKey().startsWith("KSE_")) {
        throw new IllegalArgumentException(
            "config file "
                + file
                + ": "
                + e.getKey()
                + " is not a setting (every key is a KSE_* name, as in the environment)");
      }
      if (!e.getValue().isValueNode() || e.getValue().isNull()) {
        throw new IllegalArgumentException(
            "config file " + file + ": " + e.getKey() + " must be a single value");
      }
      out.put(e.getKey(), e.getValue().asText());
    }
    return out;
  }
}
