package io.kse.slurm.testing;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A scripted slurmrestd on loopback for HTTP-level unit tests: answers are set per "METHOD path"
 * and every request is recorded with its headers and body.
 */
public final class FakeSlurmRestd implements AutoCloseable {
  /** A canned answer. */
  public record Answer(int status, String body, long delayMillis) {
    public static Answer ok(String body) {
      return new Answer(200, body, 0);
    }
  }

  /** A request as received. */
  public record Request(
      String method, String path, Map<String, List<String>> headers, String body) {
    public String header(String name) {
      return headers.entrySet().stream()
          .filter(e -> e.getKey().equalsIgnoreCase(name))
          .map(e -> e.getValue().get(0))
          .findFirst()
          .orElse(null);
    }
  }

  private final HttpServer server;
  private final Map<String, Answer> answers = new ConcurrentHashMap<>();
  private final List<Request> requests = new CopyOnWriteArrayList<>();

  public FakeSlurmRestd() {
    try {
      server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
    server.createContext("/", this::handle);
    server.setExecutor(java.util.concurrent.Executors.newCachedThreadPool());
    server.start();
  }

  public URI url() {
    return URI.create("http://127.0.0.1:" + server.getAddress().getPort());
  }

  /** Sets the answer for {@code "GET /slurm/v0.0.38/ping"} (path with query, if any). */
  public FakeSlurmRestd on(String methodAndPath, Answer answer) {
    answers.put(methodAndPath, answer);
    return this;
  }

  public List<Request> requests() {
    return List.copyOf(requests);
  }

  private void handle(HttpExchange ex) throws IOException {
    String path =
        ex.getRequestURI().getRawPath()
            + (ex.getRequestURI().getRawQuery() == null
                ? ""
                : "?" + ex.getRequestURI().getRawQuery());
    String body = new String(ex.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
    requests.add(
        new Request(ex.getRequestMethod(), path, Map.copyOf(ex.getRequestHeaders()), body));
    Answer a = answers.getOrDefault(ex.getRequestMethod() + " " + path, new Answer(404, "", 0));
    try {
      Thread.sleep(a.delayMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    byte[] out = a.body().getBytes(StandardCharsets.UTF_8);
    ex.getResponseHeaders().add("Content-Type", "application/json");
    ex.sendResponseHeaders(a.status(), a.status() == 304 || out.length == 0 ? -1 : out.length);
    if (out.length > 0 && a.status() != 304) {
      try (OutputStream os = ex.getResponseBody()) {
        os.write(out);
      }
    }
    ex.close();
  }

  @Override
  public void close() {
    server.stop(0);
  }
}
