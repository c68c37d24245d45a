package io.kse.e2e;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** The e2e stack's Prometheus, through its HTTP API (v1): queries, rules and alerts. */
final class PrometheusApi {
  private static final ObjectMapper JSON = new ObjectMapper();
  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private final URI base;

  PrometheusApi(URI base) {
    this.base = base;
  }

  /** An instant query's answer: its series, or the error Prometheus gave (a query that fails). */
  record Answer(List<JsonNode> series, String error) {
    boolean ok() {
      return error == null;
    }
  }

  Answer query(String promql) {
    JsonNode body = get("/api/v1/query?query=" + URLEncoder.encode(promql, StandardCharsets.UTF_8));
    if (!"success".equals(body.path("status").asText())) {
      return new Answer(
          List.of(), body.path("errorType").asText() + ": " + body.path("error").asText());
    }
    List<JsonNode> out = new ArrayList<>();
    body.path("data").path("result").forEach(out::add);
    return new Answer(out, null);
  }

  /** Every loaded rule: name, query, health and the error of its last evaluation. */
  List<JsonNode> rules() {
    List<JsonNode> out = new ArrayList<>();
    get("/api/v1/rules")
        .path("data")
        .path("groups")
        .forEach(g -> g.path("rules").forEach(out::add));
    return out;
  }

  /** The state of the alert's instances: firing, pending, or empty when inactive. */
  List<String> alertStates(String name) {
    List<String> out = new ArrayList<>();
    get("/api/v1/alerts")
        .path("data")
        .path("alerts")
        .forEach(
            a -> {
              if (name.equals(a.path("labels").path("alertname").asText())) {
                out.add(a.path("state").asText());
              }
            });
    return out;
  }

  private JsonNode get(String path) {
    try {
      HttpResponse<String> r =
          http.send(
              HttpRequest.newBuilder(base.resolve(path)).timeout(Duration.ofSeconds(10)).build(),
              HttpResponse.BodyHandlers.ofString());
      return JSON.readTree(r.body());
    } catch (IOException e) {
      throw new IllegalStateException("Prometheus at " + base + " did not answer " + path, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
