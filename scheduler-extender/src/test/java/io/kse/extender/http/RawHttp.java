package io.kse.extender.http;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;

/**
 * HTTP/1.1 over a plain socket, for what a well-behaved client never does: stop half-way, declare
 * one length and send another, keep a connection open doing nothing.
 */
final class RawHttp implements AutoCloseable {
  private final Socket socket;

  RawHttp(int port) throws IOException {
    socket = new Socket("127.0.0.1", port);
    socket.setSoTimeout(20_000);
  }

  /** Sends headers declaring {@code declared} body bytes, then {@code sent} bytes of body. */
  RawHttp upload(String path, String contentType, long declared, int sent) throws IOException {
    OutputStream out = socket.getOutputStream();
    out.write(
        ("POST "
                + path
                + " HTTP/1.1\r\nHost: x\r\nContent-Type: "
                + contentType
                + "\r\nContent-Length: "
                + declared
                + "\r\n\r\n")
            .getBytes(StandardCharsets.US_ASCII));
    byte[] chunk = new byte[64 * 1024];
    java.util.Arrays.fill(chunk, (byte) ' ');
    int left = sent;
    try {
      while (left > 0) {
        int n = Math.min(left, chunk.length);
        out.write(chunk, 0, n);
        left -= n;
      }
      out.flush();
    } catch (SocketException e) {
      // the server answered and closed before we finished: what the limits are for
    }
    return this;
  }

  /** Sends raw bytes as they are (a request head in pieces, say). */
  RawHttp send(String raw) throws IOException {
    try {
      socket.getOutputStream().write(raw.getBytes(StandardCharsets.US_ASCII));
      socket.getOutputStream().flush();
    } catch (SocketException e) {
      // closed by the server: what the caller checks next
    }
    return this;
  }

  /** A whole GET; returns the status line, headers and body. */
  static String get(int port, String path) throws IOException {
    try (RawHttp c = new RawHttp(port)) {
      return c.send("GET " + path + " HTTP/1.1\r\nHost: x\r\n\r\n").answer(10_000);
    }
  }

  /** What the server sent until it closed the connection or {@code timeoutMs} passed. */
  String answer(int timeoutMs) throws IOException {
    socket.setSoTimeout(timeoutMs);
    ByteArrayOutputStream b = new ByteArrayOutputStream();
    InputStream in = socket.getInputStream();
    byte[] buf = new byte[8192];
    try {
      int n;
      while ((n = in.read(buf)) > 0) {
        b.write(buf, 0, n);
        if (b.toString(StandardCharsets.UTF_8).contains("\r\n\r\n") && complete(b)) {
          break;
        }
      }
    } catch (java.net.SocketTimeoutException | SocketException e) {
      // nothing more
    }
    return b.toString(StandardCharsets.UTF_8);
  }

  /** True when the server closed the connection (a read returns end of stream or fails). */
  boolean closedByServer(int timeoutMs) throws IOException {
    socket.setSoTimeout(timeoutMs);
    try {
      return socket.getInputStream().read() == -1;
    } catch (java.net.SocketTimeoutException e) {
      return false;
    } catch (SocketException e) {
      return true;
    }
  }

  private static boolean complete(ByteArrayOutputStream b) {
    String s = b.toString(StandardCharsets.UTF_8);
    int head = s.indexOf("\r\n\r\n");
    java.util.regex.Matcher m =
        java.util.regex.Pattern.compile("(?i)content-length: *(\\d+)")
            .matcher(s.substring(0, head));
    return m.find() && s.length() - head - 4 >= Integer.parseInt(m.group(1));
  }

  /** A whole POST; returns the status line, headers and body. */
  static String post(int port, String path, String body) throws IOException {
    try (RawHttp c = new RawHttp(port)) {
      byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
      OutputStream out = c.socket.getOutputStream();
      out.write(
          ("POST "
                  + path
                  + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: "
                  + bytes.length
                  + "\r\n\r\n")
              .getBytes(StandardCharsets.US_ASCII));
      try {
        out.write(bytes);
        out.flush();
      } catch (SocketException e) {
        // answered early
      }
      return c.answer(10_000);
    }
  }

  @Override
  public void close() throws IOException {
    socket.close();
  }
}
