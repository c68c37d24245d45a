package io.kse.slurm.rest;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kse.slurm.SlurmException;
import io.kse.slurm.SlurmUnavailableException;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.Optional;
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

  public Response get(String what, String path) {
    return send(what, "GET", path, null);
  }

  public Response delete(String what, String path) {
    return send(what, "DELETE", path, null);
  }

  public Response post(String what, String path, JsonNode body) {
    return send(what, "POST", path, body);
  }

  /** Sends one request; any answer but 200/304 becomes a typed exception. */
  Response send(String what, String method, String path, JsonNode body) {
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
    HttpResponse<String> resp;
    try {
      resp = http.send(req.build(), HttpResponse.BodyHandlers.ofString());
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
    if (resp.statusCode() == 304) {
      return new Response(304, null);
    }
    JsonNode parsed = parse(resp.body());
    if (resp.statusCode() == 200 && parsed != null) {
      return new Response(200, parsed);
    }
    throw SlurmErrors.classify(what, resp.statusCode(), parsed, resp.body(), elapsed, token);
  }

  private static JsonNode parse(String text) {
    if (text == null || text.isBlank()) {
      return null;
    }
    try {
      return JSON.readTree(text);
    } catch (IOException e) {
      return null;
    }
  }
}
