package io.kse.extender.wire;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;

/** Reading small extender/v1 bodies as trees, each problem named for the caller. */
final class WireJson {
  private static final ObjectMapper JSON = new ObjectMapper();

  private WireJson() {}

  static JsonNode object(byte[] body, String what) {
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
}
