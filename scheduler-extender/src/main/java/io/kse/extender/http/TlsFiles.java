package io.kse.extender.http;

import io.vertx.core.http.ClientAuth;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.net.PemKeyCertOptions;
import io.vertx.core.net.PemTrustOptions;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * HTTPS for the verbs when kube-scheduler runs apart from the extender: the server's certificate
 * and key, and the CA whose client certificates are accepted (kube-scheduler's extender {@code
 * tlsConfig.certFile/keyFile}). A client without a certificate from that CA cannot connect.
 */
public record TlsFiles(Path certificate, Path key, Path clientCa) {
  /** Each file readable and PEM, checked at configuration time: a problem per bad file. */
  public List<String> problems() {
    List<String> out = new ArrayList<>();
    check(certificate, "KSE_HTTP_TLS_CERT_FILE", "CERTIFICATE", out);
    check(key, "KSE_HTTP_TLS_KEY_FILE", "PRIVATE KEY", out);
    check(clientCa, "KSE_HTTP_TLS_CLIENT_CA_FILE", "CERTIFICATE", out);
    return out;
  }

  private static void check(Path p, String name, String pem, List<String> out) {
    try {
      String text = Files.readString(p);
      if (!text.contains("-----BEGIN ") || !text.contains(pem)) {
        out.add(name + "=" + p + ": not a PEM file holding a " + pem);
      }
    } catch (java.io.IOException | RuntimeException e) {
      out.add(name + "=" + p + ": cannot read it (" + e.getMessage() + ")");
    }
  }

  void apply(HttpServerOptions options) {
    options
        .setSsl(true)
        .setKeyCertOptions(
            new PemKeyCertOptions().setCertPath(certificate.toString()).setKeyPath(key.toString()))
        .setTrustOptions(new PemTrustOptions().addCertPath(clientCa.toString()))
        .setClientAuth(ClientAuth.REQUIRED);
  }
}
