package io.kse.slurm.rest;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kse.slurm.SlurmException;
import io.kse.slurm.SlurmUnavailableException;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Optional;
import java.util.Set;
import javax.net.ssl.SSLContext;

/**
 * HTTP to slurmrestd, written once for every API version: JSON in and out, the two JWT headers,
 * timeouts, and the mapping of failures to {@link SlurmException}s.
 */
public final class SlurmHttp {
  private static final ObjectMapper JSON = new ObjectMapper();

  /** A successful answer: the status (200 or 304) and the parsed body (null for 304). */
  public record Response(int status, JsonNode body) {}

  private final URI base;
  private final Optional<String> user;
  private final TokenSource tokens;
  private final Duration requestTimeout;
  private final HttpClient http;
  private final java.util.concurrent.atomic.LongAdder received =
      new java.util.concurrent.atomic.LongAdder();

  public SlurmHttp(
      URI base,
      Optional<String> user,
      TokenSource tokens,
      Duration connectTimeout,
      Duration requestTimeout,
      Optional<SSLContext> tls) {
    this.base = URI.create(base.toString().replaceAll("/+$", ""));
    this.user = user;
    this.tokens = tokens;
    this.requestTimeout = requestTimeout;
    HttpClient.Builder b =
        HttpClient.newBuilder()
            // slurmrestd answers the h2c upgrade of HTTP/2 with 405 and closes the connection
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(connectTimeout)
            .followRedirects(HttpClient.Redirect.NEVER);
    tls.ifPresent(b::sslContext);
    this.http = b.build();
  }

  public URI base() {
    return base;
  }

  /** Bytes of every answer's body read from slurmrestd so far: what we cost it to serialize. */
  public long receivedBytes() {
    return received.sum();
  }

  public Response get(String what, String path) {
    return send(what, "GET", path, null, null);
  }

  /**
   * A GET whose answer keeps, in each object of its top-level array {@code array}, only the fields
   * {@code keep} names: a job listing is every job slurmctld remembers (about 4 KB of JSON each)
   * whenever anything changed, and building a tree of all of it was a sixth of the extender's CPU
   * in a burst (issue 16). The rest is skipped while reading.
   */
  public Response get(String what, String path, String array, Set<String> keep) {
    return send(what, "GET", path, null, new Pruning(array, keep));
  }

  private record Pruning(String array, Set<String> keep) {}

  public Response delete(String what, String path) {
    return send(what, "DELETE", path, null, null);
  }

  public Response post(String what, String path, JsonNode body) {
    return send(what, "POST", path, body, null);
  }

  /** Sends one request; any answer but 200/304 becomes a typed exception. */
  Response send(String what, String method, String path, JsonNode body, Pruning pruning) {
    String token = tokens.token();
    HttpRequest.Builder req =
        HttpRequest.newBuilder(base.resolve(path))
            .timeout(requestTimeout)
            .header("Accept", "application/json")
            .header("X-SLURM-USER-TOKEN", token);
    user.or(() -> Jwt.user(token)).ifPresent(u -> req.header("X-SLURM-USER-NAME", u));
    if (body != null) {
      req.header("Content-Type", "application/json")
          .method(method, HttpRequest.BodyPublishers.ofString(body.toString()));
    } else {
      req.method(method, HttpRequest.BodyPublishers.noBody());
    }
    long start = System.nanoTime();
    HttpResponse<byte[]> resp;
    try {
      // bytes, not a String: Jackson reads UTF-8 directly, without a decoded copy of the body
      resp = http.send(req.build(), HttpResponse.BodyHandlers.ofByteArray());
    } catch (HttpTimeoutException e) {
      throw new SlurmUnavailableException(
          what + " failed: no answer from " + base + " within " + requestTimeout.toMillis() + " ms",
          e);
    } catch (IOException e) {
      throw new SlurmUnavailableException(
          what + " failed: cannot reach slurmrestd at " + base + ": " + e, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new SlurmUnavailableException(what + " interrupted", e);
    }
    Duration elapsed = Duration.ofNanos(System.nanoTime() - start);
    received.add(resp.body() == null ? 0 : resp.body().length);
    if (resp.statusCode() == 304) {
      return new Response(304, null);
    }
    boolean ok = resp.statusCode() == 200;
    JsonNode parsed = parse(resp.body(), ok ? pruning : null);
    if (ok && parsed != null) {
      return new Response(200, parsed);
    }
    throw SlurmErrors.classify(
        what,
        resp.statusCode(),
        parsed,
        resp.body() == null ? "" : new String(resp.body(), StandardCharsets.UTF_8),
        elapsed,
        token);
  }

  static JsonNode parse(byte[] body, Pruning pruning) {
    if (body == null || body.length == 0) {
      return null;
    }
    try {
      JsonNode tree = pruning == null ? JSON.readTree(body) : pruned(body, pruning);
      return tree == null || tree.isMissingNode() ? null : tree;
    } catch (IOException e) {
      return null;
    }
  }

  /** For tests: the body as {@link #get(String, String, String, Set)} reads it. */
  static JsonNode parsePruned(byte[] body, String array, Set<String> keep) {
    return parse(body, new Pruning(array, keep));
  }

  private static JsonNode pruned(byte[] body, Pruning pruning) throws IOException {
    try (JsonParser p = JSON.getFactory().createParser(body)) {
      if (p.nextToken() != JsonToken.START_OBJECT) {
        return JSON.readTree(body);
      }
      ObjectNode root = JSON.createObjectNode();
      while (p.nextToken() == JsonToken.FIELD_NAME) {
        String name = p.currentName();
        if (p.nextToken() == JsonToken.START_ARRAY && name.equals(pruning.array())) {
          root.set(name, prunedArray(p, pruning.keep()));
        } else {
          root.set(name, JSON.readTree(p));
        }
      }
      return root;
    }
  }

  private static ArrayNode prunedArray(JsonParser p, Set<String> keep) throws IOException {
    ArrayNode out = JSON.createArrayNode();
    for (JsonToken t = p.nextToken(); t != JsonToken.END_ARRAY; t = p.nextToken()) {
      if (t != JsonToken.START_OBJECT) {
        out.add((JsonNode) JSON.readTree(p));
        continue;
      }
      ObjectNode o = out.addObject();
      while (p.nextToken() == JsonToken.FIELD_NAME) {
        String field = p.currentName();
        p.nextToken();
        if (keep.contains(field)) {
          o.set(field, JSON.readTree(p));
        } else {
          p.skipChildren();
        }
      }
    }
    return out;
  }
}
