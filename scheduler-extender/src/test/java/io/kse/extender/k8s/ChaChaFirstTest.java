package io.kse.extender.k8s;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.lang.reflect.Proxy;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class ChaChaFirstTest {
  private static final List<String> SUITES =
      List.of(
          "TLS_AES_256_GCM_SHA384",
          "TLS_AES_128_GCM_SHA256",
          "TLS_CHACHA20_POLY1305_SHA256",
          "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
          "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
          "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
          "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
          "TLS_RSA_WITH_AES_128_CBC_SHA");

  @ParameterizedTest
  @ValueSource(longs = {1, 2, 3, 4, 5, 6, 7, 8})
  void chaChaSuitesComeFirstAndNothingElseChanges(long seed) {
    List<String> in = new ArrayList<>(SUITES);
    Collections.shuffle(in, new Random(seed));
    List<String> out = Arrays.asList(ChaChaFirst.order(in.toArray(String[]::new)));
    assertThat(out).containsExactlyInAnyOrderElementsOf(in);
    List<String> chacha = in.stream().filter(s -> s.contains("CHACHA20")).toList();
    List<String> rest = in.stream().filter(s -> !s.contains("CHACHA20")).toList();
    assertThat(out.subList(0, chacha.size())).isEqualTo(chacha);
    assertThat(out.subList(chacha.size(), out.size())).isEqualTo(rest);
  }

  @Test
  void keepsWhatTheCallerSetAndReordersTheContextsSuites() throws Exception {
    AtomicReference<SSLParameters> given = new AtomicReference<>();
    HttpClient.Builder capturing = capturing(given);
    SSLContext ctx = SSLContext.getDefault();
    SSLParameters fabric8s = new SSLParameters(null, new String[] {"TLSv1.3"});
    new ChaChaFirst(capturing).sslContext(ctx).sslParameters(fabric8s).build();

    assertThat(given.get().getProtocols()).containsExactly("TLSv1.3");
    String[] defaults = ctx.getDefaultSSLParameters().getCipherSuites();
    assertThat(given.get().getCipherSuites()).containsExactly(ChaChaFirst.order(defaults));
    assertThat(given.get().getCipherSuites()[0]).contains("CHACHA20");
  }

  @Test
  void withoutParametersTheDefaultsAreReordered() throws Exception {
    AtomicReference<SSLParameters> given = new AtomicReference<>();
    new ChaChaFirst(capturing(given)).build();
    assertThat(given.get().getCipherSuites())
        .containsExactly(
            ChaChaFirst.order(SSLContext.getDefault().getDefaultSSLParameters().getCipherSuites()));
  }

  /**
   * A real handshake: a TLS server that takes the client's preference (as Go's does when the client
   * lists ChaCha20 first) agrees ChaCha20-Poly1305 with our client and AES-GCM with fabric8's own.
   */
  @Test
  void theApiServerConnectionNegotiatesChaCha(@TempDir Path dir) throws Exception {
    SSLContext server = serverContext(dir);
    assertThat(suiteAgreed(server, KubeClients::build)).isEqualTo("TLS_CHACHA20_POLY1305_SHA256");
    assertThat(suiteAgreed(server, c -> new KubernetesClientBuilder().withConfig(c).build()))
        .contains("_AES_");
  }

  private static String suiteAgreed(
      SSLContext ctx, java.util.function.Function<Config, KubernetesClient> client)
      throws Exception {
    try (SSLServerSocket s = (SSLServerSocket) ctx.getServerSocketFactory().createServerSocket(0)) {
      SSLParameters p = s.getSSLParameters();
      p.setUseCipherSuitesOrder(false); // the client's order decides
      s.setSSLParameters(p);
      CompletableFuture<String> agreed =
          CompletableFuture.supplyAsync(
              () -> {
                try (SSLSocket c = (SSLSocket) s.accept()) {
                  BufferedReader in =
                      new BufferedReader(
                          new InputStreamReader(c.getInputStream(), StandardCharsets.US_ASCII));
                  for (String line = in.readLine(); line != null && !line.isEmpty(); ) {
                    line = in.readLine();
                  }
                  String body = "{\"major\":\"1\",\"minor\":\"37\"}";
                  OutputStream out = c.getOutputStream();
                  out.write(
                      ("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                              + body.length()
                              + "\r\nConnection: close\r\n\r\n"
                              + body)
                          .getBytes(StandardCharsets.US_ASCII));
                  out.flush();
                  return c.getSession().getCipherSuite();
                } catch (Exception e) {
                  throw new IllegalStateException(e);
                }
              });
      String url = "https://127.0.0.1:" + s.getLocalPort();
      Config config =
          new ConfigBuilder(Config.empty())
              .withMasterUrl(url)
              .withTrustCerts(true)
              .withDisableHostnameVerification(true)
              .withRequestRetryBackoffLimit(0)
              .build();
      try (KubernetesClient k = client.apply(config)) {
        assertThat(k.raw(url + "/version")).contains("37");
      }
      return agreed.get(30, TimeUnit.SECONDS);
    }
  }

  private static SSLContext serverContext(Path dir) throws Exception {
    Path store = dir.resolve("server.p12");
    Process keytool =
        new ProcessBuilder(
                Path.of(System.getProperty("java.home"), "bin", "keytool").toString(),
                "-genkeypair",
                "-keyalg",
                "RSA",
                "-keysize",
                "2048",
                "-alias",
                "server",
                "-dname",
                "CN=127.0.0.1",
                "-validity",
                "1",
                "-storetype",
                "PKCS12",
                "-keystore",
                store.toString(),
                "-storepass",
                "changeit")
            .redirectErrorStream(true)
            .start();
    assertThat(keytool.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(keytool.exitValue()).isZero();
    KeyStore ks = KeyStore.getInstance("PKCS12");
    try (var in = Files.newInputStream(store)) {
      ks.load(in, "changeit".toCharArray());
    }
    KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
    kmf.init(ks, "changeit".toCharArray());
    SSLContext ctx = SSLContext.getInstance("TLS");
    ctx.init(kmf.getKeyManagers(), null, null);
    return ctx;
  }

  /** A builder that only records the TLS parameters it is given. */
  private static HttpClient.Builder capturing(AtomicReference<SSLParameters> given) {
    return (HttpClient.Builder)
        Proxy.newProxyInstance(
            ChaChaFirstTest.class.getClassLoader(),
            new Class<?>[] {HttpClient.Builder.class},
            (proxy, method, args) -> {
              if (method.getName().equals("sslParameters")) {
                given.set((SSLParameters) args[0]);
              }
              return method.getName().equals("build") ? null : proxy;
            });
  }
}
