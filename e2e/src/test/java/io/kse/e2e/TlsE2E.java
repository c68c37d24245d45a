package io.kse.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.fabric8.kubernetes.api.model.Pod;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * kube-scheduler and the extender apart (docs/security.md): the real slurm-inference kube-scheduler
 * calls the verbs over HTTPS with its client certificate, and places a pod; a client without one
 * cannot call them at all.
 */
class TlsE2E extends Scenario {
  @Test
  void kubeSchedulerWithAClientCertificatePlacesPodsAndNobodyElseGetsIn() throws Exception {
    assumeTrue(stack.managed(), "reconfigures the local stack's kube-scheduler and extender");
    stack.verbsTls(true);
    try {
      long t0 = System.nanoTime();
      Pod p = awaitBound(create(inferencePod("over-tls", 1)).getMetadata().getName());
      System.out.printf(
          "[e2e] bound over HTTPS with client certificates in %d ms%n",
          (System.nanoTime() - t0) / 1_000_000);
      assertThat(placeholderOf(p).nodes()).containsExactly(p.getSpec().getNodeName());
      // no client certificate: the handshake fails (the JDK trusts no self-signed server either,
      // so trust everything here: what is tested is the server's demand for a client certificate)
      javax.net.ssl.SSLContext trustAll = javax.net.ssl.SSLContext.getInstance("TLS");
      trustAll.init(
          null,
          new javax.net.ssl.TrustManager[] {
            new javax.net.ssl.X509TrustManager() {
              @Override
              public void checkClientTrusted(java.security.cert.X509Certificate[] c, String a) {}

              @Override
              public void checkServerTrusted(java.security.cert.X509Certificate[] c, String a) {}

              @Override
              public java.security.cert.X509Certificate[] getAcceptedIssuers() {
                return new java.security.cert.X509Certificate[0];
              }
            }
          },
          null);
      HttpClient anonymous =
          HttpClient.newBuilder()
              .sslContext(trustAll)
              .connectTimeout(Duration.ofSeconds(5))
              .build();
      URI bind =
          URI.create(
              stack.env("KSE_E2E_EXTENDER_VERBS_URL").replace("http://", "https://") + "/bind");
      boolean refused;
      try {
        anonymous.send(
            HttpRequest.newBuilder(bind).POST(HttpRequest.BodyPublishers.ofString("{}")).build(),
            HttpResponse.BodyHandlers.ofString());
        refused = false;
      } catch (java.io.IOException e) {
        refused = true;
      }
      assertThat(refused).as("a client without a certificate cannot call /bind").isTrue();
    } finally {
      stack.verbsTls(false);
    }
  }
}
