package io.kse.extender.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.kse.extender.bind.BindService;
import io.kse.extender.filter.FilterService;
import io.kse.extender.k8s.CallerCheck;
import io.kse.extender.k8s.NodeNames;
import io.kse.extender.k8s.PodActions;
import io.kse.extender.k8s.PodBinder;
import io.kse.extender.k8s.PodSource;
import io.kse.extender.lifecycle.PlaceholderRegistry;
import io.kse.extender.metrics.ExtenderMetrics;
import io.kse.extender.testing.FakeSlurm;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.Vertx;
import java.io.ByteArrayInputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The verbs over HTTPS with client certificates, as kube-scheduler's extender {@code tlsConfig}
 * calls them when it runs apart: a client without a certificate from the configured CA cannot call;
 * one with it can. Certificates are made with openssl for each run.
 */
class VerbsTlsTest {
  @TempDir Path dir;

  void openssl(String... args) throws Exception {
    List<String> cmd = new java.util.ArrayList<>(List.of("openssl"));
    cmd.addAll(List.of(args));
    Process p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes());
    assertThat(p.waitFor()).as(String.join(" ", cmd) + "\n" + out).isZero();
  }

  /** A CA, a server certificate for 127.0.0.1, a client certificate (PKCS#12 for the JDK). */
  void certificates() throws Exception {
    openssl(
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "ca.key",
        "-out",
        "ca.crt",
        "-days",
        "1",
        "-subj",
        "/CN=kse-test-ca");
    Files.writeString(dir.resolve("san.cnf"), "subjectAltName=IP:127.0.0.1\n");
    for (String who : List.of("server", "client")) {
      openssl(
          "req",
          "-newkey",
          "rsa:2048",
          "-nodes",
          "-keyout",
          who + ".key",
          "-out",
          who + ".csr",
          "-subj",
          "/CN=" + who);
      openssl(
          "x509",
          "-req",
          "-in",
          who + ".csr",
          "-CA",
          "ca.crt",
          "-CAkey",
          "ca.key",
          "-CAcreateserial",
          "-out",
          who + ".crt",
          "-days",
          "1",
          "-extfile",
          "san.cnf");
    }
    openssl(
        "pkcs12",
        "-export",
        "-in",
        "client.crt",
        "-inkey",
        "client.key",
        "-out",
        "client.p12",
        "-passout",
        "pass:test");
  }

  @Test
  void onlyClientsWithACertificateFromTheCaMayCallTheVerbs() throws Exception {
    assumeTrue(new ProcessBuilder("openssl", "version").start().waitFor() == 0, "needs openssl");
    certificates();
    TlsFiles tls =
        new TlsFiles(dir.resolve("server.crt"), dir.resolve("server.key"), dir.resolve("ca.crt"));
    assertThat(tls.problems()).isEmpty();
    FakeSlurm fake = new FakeSlurm();
    ExtenderServer s =
        new ExtenderServer(
            new FilterService(
                fake.cache,
                new PlaceholderRegistry(),
                new NodeNames(),
                p -> {},
                io.kse.extender.lifecycle.Placement::of,
                fake.cache::allocationHinted),
            new BindService(
                fake.cache,
                PodSource.none(),
                new NodeNames(),
                (pod, node) -> new PodBinder.Outcome(PodBinder.Result.BOUND, "bound"),
                PodActions.none(),
                p -> {},
                io.kse.extender.lifecycle.Placement::of,
                io.kse.extender.dra.GpuClaims.none()),
            new ExtenderMetrics(new SimpleMeterRegistry()),
            () -> true,
            () -> true,
            () -> "",
            p -> Optional.empty(),
            CallerCheck.nobody(),
            HttpLimits.forTests(64 * 1024),
            () -> 100_000,
            Clock.systemUTC());
    Vertx vertx = Vertx.vertx();
    try {
      int port =
          s.listen(vertx, "127.0.0.1", 0, Optional.of(tls))
              .toCompletionStage()
              .toCompletableFuture()
              .get(10, TimeUnit.SECONDS)
              .actualPort();
      URI uri = URI.create("https://127.0.0.1:" + port + "/bind");
      HttpRequest bind =
          HttpRequest.newBuilder(uri)
              .header("Content-Type", "application/json")
              .POST(HttpRequest.BodyPublishers.ofString("{\"PodName\":\"x\"}"))
              .build();

      HttpClient anonymous = client(false);
      assertThatThrownBy(() -> anonymous.send(bind, HttpResponse.BodyHandlers.ofString()))
          .as("no client certificate: no connection")
          .isInstanceOf(java.io.IOException.class);

      HttpResponse<String> r = client(true).send(bind, HttpResponse.BodyHandlers.ofString());
      assertThat(r.statusCode()).isEqualTo(400);
      assertThat(r.body()).contains("needs PodName, PodUID and Node");
    } finally {
      s.close();
      vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }
  }

  HttpClient client(boolean withCertificate) throws Exception {
    KeyStore trust = KeyStore.getInstance(KeyStore.getDefaultType());
    trust.load(null, null);
    trust.setCertificateEntry(
        "ca",
        CertificateFactory.getInstance("X.509")
            .generateCertificate(
                new ByteArrayInputStream(Files.readAllBytes(dir.resolve("ca.crt")))));
    TrustManagerFactory tmf =
        TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    tmf.init(trust);
    KeyManagerFactory kmf = null;
    if (withCertificate) {
      KeyStore keys = KeyStore.getInstance("PKCS12");
      try (var in = Files.newInputStream(dir.resolve("client.p12"))) {
        keys.load(in, "test".toCharArray());
      }
      kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
      kmf.init(keys, "test".toCharArray());
    }
    SSLContext ssl = SSLContext.getInstance("TLS");
    ssl.init(kmf == null ? null : kmf.getKeyManagers(), tmf.getTrustManagers(), null);
    return HttpClient.newBuilder()
        .version(HttpClient.Version.HTTP_1_1)
        .sslContext(ssl)
        .connectTimeout(Duration.ofSeconds(5))
        .build();
  }
}
