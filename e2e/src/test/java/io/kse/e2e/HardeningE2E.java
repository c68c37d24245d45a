package io.kse.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The service's edges against the real extender (run with the Deployment's heap): a forged bind
 * acts on nothing, the worst mix of half-sent uploads leaves it up and answering.
 */
class HardeningE2E extends Scenario {
  final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  @org.junit.jupiter.api.BeforeEach
  void managedOnly() {
    org.junit.jupiter.api.Assumptions.assumeTrue(
        stack.managed(), "calls the extender's loopback verbs port directly");
  }

  URI verbs(String path) {
    return URI.create(stack.env("KSE_E2E_EXTENDER_VERBS_URL") + path);
  }

  String post(String path, String body) throws Exception {
    return http.send(
            HttpRequest.newBuilder(verbs(path))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build(),
            HttpResponse.BodyHandlers.ofString())
        .body();
  }

  @Test
  void aForgedBindWithARunningPodsUidChangesNothing() throws Exception {
    Pod p = awaitBound(create(inferencePod("victim", 1)).getMetadata().getName());
    long job = placeholderOf(p).id();
    String forged =
        "{\"PodName\":\"made-up\",\"PodNamespace\":\""
            + ns
            + "\",\"PodUID\":\""
            + p.getMetadata().getUid()
            + "\",\"Node\":\""
            + p.getSpec().getNodeName()
            + "\"}";
    assertThat(post("/bind", forged)).contains("no pod of this scheduler named");
    Thread.sleep(3_000); // long enough for a reaction, had there been one
    Pod now = pod("victim");
    assertThat(now.getMetadata().getDeletionTimestamp()).as("not evicted").isNull();
    assertThat(slurm.job(job).map(Scenario::running)).as("its job runs on").contains(true);
  }

  @Test
  void halfSentUploadsLeaveTheExtenderUpAndAnswering() throws Exception {
    // before: 37 connections each sending 14 MiB of a declared 15 MiB killed the JVM
    int limit = 8 << 20; // the default KSE_HTTP_BODY_LIMIT_BYTES
    URI u = verbs("/filter");
    List<Socket> open = new ArrayList<>();
    int refused = 0;
    try {
      byte[] chunk = new byte[1 << 20];
      java.util.Arrays.fill(chunk, (byte) ' ');
      for (int i = 0; i < 40; i++) {
        Socket s = new Socket(u.getHost(), u.getPort());
        open.add(s);
        OutputStream out = s.getOutputStream();
        out.write(
            ("POST /filter HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                    + "Content-Length: "
                    + (limit - 1)
                    + "\r\n\r\n")
                .getBytes(StandardCharsets.US_ASCII));
        try {
          for (int mb = 0; mb < 7; mb++) {
            out.write(chunk);
          }
          out.flush();
        } catch (java.io.IOException e) {
          refused++; // answered 503 and closed: the budget is full
        }
      }
      for (Socket s : open) {
        s.setSoTimeout(15_000);
        InputStream in = s.getInputStream();
        byte[] head = in.readNBytes(12);
        String status = new String(head, StandardCharsets.US_ASCII);
        assertThat(status).as("every upload ends answered").matches("HTTP/1.1 (503|408).*|");
      }
    } finally {
      for (Socket s : open) {
        s.close();
      }
    }
    System.out.printf("[e2e] 40 half-sent 7 MiB uploads: %d refused while sending%n", refused);
    HttpResponse<String> health =
        http.send(
            HttpRequest.newBuilder(URI.create(stack.extenderUrl() + "/readyz")).build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(health.statusCode()).as("still up and ready").isEqualTo(200);
    create(inferencePod("after", 1));
    awaitBound("after");
    await().atMost(Duration.ofSeconds(5)).until(() -> pod("after").getSpec().getNodeName() != null);
  }
}
