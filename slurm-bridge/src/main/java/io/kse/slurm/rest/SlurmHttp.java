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

  /** When the token this transport sends expires, if it says ({@link TokenSource#expiry}). */
  public java.util.Optional<java.time.Instant> tokenExpiry() {
    return tokens.expiry();
  }

  /** Bytes of every answer's body read from slurmrestd so far: what we cost it to serialize. */
  public long receivedBytes() {
    return received.sum();
  }

  public Response get(String what, String path) {
    return send(what, "GET", path, null, null, a -> false);
  }

  /**
   * A GET whose answer keeps, in each object of its top-level array {@code array}, only the fields
   * {@code keep} names: a job listing is every job slurmctld remembers (about 4 KB of JSON each)
   * whenever anything changed, and building a tree of all of it was a sixth of the extender's CPU
   * in a burst. The rest is skipped while reading.
   */
  public Response get(String what, String path, String array, Set<String> keep) {
    return send(what, "GET", path, null, new Pruning(array, keep), a -> false);
  }

  private record Pruning(String array, Set<String> keep) {}

  public Response delete(String what, String path) {
    return send(what, "DELETE", path, null, null, a -> false);
  }

  public Response post(String what, String path, JsonNode body) {
    return send(what, "POST", path, body, null, a -> false);
  }

  /**
   * A POST whose error answer is still an answer when {@code done} says so of its body: the request
   * took effect and the errors only describe what followed (the caller reads them).
   */
  public Response post(
      String what, String path, JsonNode body, java.util.function.Predicate<JsonNode> done) {
    return send(what, "POST", path, body, null, done);
  }

  /**
   * Sends one request; any answer but 200/304 becomes a typed exception, unless {@code done} says
   * its body shows the request took effect.
   */
  Response send(
      String what,
      String method,
      String path,
      JsonNode body,
      Pruning pruning,
      java.util.function.Predicate<JsonNode> done) {
    String token = tokens.token();
    long start = System.nanoTime();
    // bytes, not a String: Jackson reads UTF-8 directly, without a decoded copy of the body
    HttpResponse<byte[]> resp =
        exchange(
            what,
            request(method, path, body, requestTimeout, token),
            HttpResponse.BodyHandlers.ofByteArray());
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
    if (parsed != null && done.test(parsed)) {
      return new Response(resp.statusCode(), parsed);
    }
    throw SlurmErrors.classify(
        what,
        resp.statusCode(),
        parsed,
        resp.body() == null ? "" : new String(resp.body(), StandardCharsets.UTF_8),
        elapsed,
        token);
  }

  /**
   * A GET whose top-level array {@code array} is handed to {@code each} one object at a time, as it
   * is read, with only the fields {@code keep} names: slurmctld's whole job table (some 150 MB of
   * JSON at 50,000 jobs) is never held, only what {@code each} keeps. {@code timeout} bounds the
   * wait for the answer to begin (slurmrestd writes it only once it has it whole). Returns the
   * answer's other top-level fields that are not arrays or objects (e.g. {@code last_update}'s
   * parts are skipped; scalars kept), and {@code last_update} itself.
   */
  public ObjectNode stream(
      String what,
      String path,
      String array,
      Set<String> keep,
      Duration timeout,
      java.util.function.Consumer<JsonNode> each) {
    String token = tokens.token();
    long start = System.nanoTime();
    HttpResponse<java.io.InputStream> resp =
        exchange(
            what,
            request("GET", path, null, timeout, token),
            HttpResponse.BodyHandlers.ofInputStream());
    long[] count = {0};
    ObjectNode rest = JSON.createObjectNode();
    try (java.io.InputStream in = counting(resp.body(), count)) {
      if (resp.statusCode() == 304) {
        return rest; // unchanged since update_time: nothing to hand on
      }
      if (resp.statusCode() != 200) {
        byte[] body = in.readAllBytes();
        throw SlurmErrors.classify(
            what,
            resp.statusCode(),
            parse(body, null),
            new String(body, StandardCharsets.UTF_8),
            Duration.ofNanos(System.nanoTime() - start),
            token);
      }
      try (JsonParser p = JSON.getFactory().createParser(in)) {
        if (p.nextToken() != JsonToken.START_OBJECT) {
          throw new SlurmUnavailableException(what + " failed: the answer is not a JSON object");
        }
        while (p.nextToken() == JsonToken.FIELD_NAME) {
          String name = p.currentName();
          if (p.nextToken() == JsonToken.START_ARRAY && name.equals(array)) {
            for (JsonToken t = p.nextToken(); t != JsonToken.END_ARRAY; t = p.nextToken()) {
              if (t == JsonToken.START_OBJECT) {
                each.accept(prunedObject(p, keep));
              } else {
                p.skipChildren();
              }
            }
          } else if (name.equals("last_update")) {
            rest.set(name, JSON.readTree(p));
          } else {
            p.skipChildren();
          }
        }
      }
    } catch (IOException e) {
      throw new SlurmUnavailableException(what + " failed while reading the answer: " + e, e);
    } finally {
      received.add(count[0]);
    }
    return rest;
  }

  private HttpRequest request(
      String method, String path, JsonNode body, Duration timeout, String token) {
    HttpRequest.Builder req =
        HttpRequest.newBuilder(base.resolve(path))
            .timeout(timeout)
            .header("Accept", "application/json")
            .header("X-SLURM-USER-TOKEN", token);
    user.or(() -> Jwt.user(token)).ifPresent(u -> req.header("X-SLURM-USER-NAME", u));
    if (body != null) {
      req.header("Content-Type", "application/json")
          .method(method, HttpRequest.BodyPublishers.ofString(body.toString()));
    } else {
      req.method(method, HttpRequest.BodyPublishers.noBody());
    }
    return req.build();
  }

  /** One exchange; a transport failure becomes "unavailable", naming what was asked. */
  private <T> HttpResponse<T> exchange(
      String what, HttpRequest req, HttpResponse.BodyHandler<T> handler) {
    try {
      return http.send(req, handler);
    } catch (HttpTimeoutException e) {
      throw new SlurmUnavailableException(
          what
              + " failed: no answer from "
              + base
              + " within "
              + req.timeout().orElse(requestTimeout).toMillis()
              + " ms",
          e);
    } catch (IOException e) {
      throw new SlurmUnavailableException(
          what + " failed: cannot reach slurmrestd at " + base + ": " + e, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new SlurmUnavailableException(what + " interrupted", e);
    }
  }

  /** {@code in}, adding every byte read to {@code count[0]}. */
  private static java.io.InputStream counting(java.io.InputStream in, long[] count) {
    return new java.io.FilterInputStream(in) {
      @Override
      public int read() throws IOException {
        int b = super.read();
        if (b >= 0) {
          count[0]++;
        }
        return b;
      }

      @Override
      public int read(byte[] buf, int off, int len) throws IOException {
        int n = super.read(buf, off, len);
        if (n > 0) {
          count[0] += n;
        }
        return n;
      }
    };
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
      out.add(prunedObject(p, keep));
    }
    return out;
  }

  /** The object the parser is at (its START_OBJECT read), with only the fields {@code keep}. */
  private static ObjectNode prunedObject(JsonParser p, Set<String> keep) throws IOException {
    ObjectNode o = JSON.createObjectNode();
    while (p.nextToken() == JsonToken.FIELD_NAME) {
      String field = p.currentName();
      p.nextToken();
      if (keep.contains(field)) {
        o.set(field, JSON.readTree(p));
      } else {
        p.skipChildren();
      }
    }
    return o;
  }
}
