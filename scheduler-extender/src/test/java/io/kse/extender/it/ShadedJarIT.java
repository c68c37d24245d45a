package io.kse.extender.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.kse.slurm.testing.LocalSlurmCluster;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code java -jar kse-scheduler-extender.jar}: reads its config, serves, and stops on SIGTERM. */
@EnableKubernetesMockClient(crud = true)
class ShadedJarIT {
  static KubernetesClient client;
  static final HttpClient http =
      HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  static int status(String url) {
    try {
      return http.send(
              HttpRequest.newBuilder(URI.create(url)).build(),
              HttpResponse.BodyHandlers.discarding())
          .statusCode();
    } catch (Exception e) {
      return -1;
    }
  }

  static String body(String url) throws Exception {
    return http.send(
            HttpRequest.newBuilder(URI.create(url)).build(), HttpResponse.BodyHandlers.ofString())
        .body();
  }

  @Test
  void theJarStartsServesEveryEndpointAndStopsOnSigterm(@TempDir Path dir) throws Exception {
    LocalSlurmCluster cluster = LocalSlurmCluster.shared(LocalSlurmCluster.Mode.PARTITION);
    Path jar = Path.of("target/kse-scheduler-extender.jar").toAbsolutePath();
    assertThat(jar).exists();
    // the default cluster identity comes from kube-system's UID (KSE_CLUSTER_ID unset)
    client
        .namespaces()
        .resource(
            new io.fabric8.kubernetes.api.model.NamespaceBuilder()
                .withNewMetadata()
                .withName("kube-system")
                .withUid("0f3c9a7e-5b1d-4c2a-9e8f-112233445566")
                .endMetadata()
                .build())
        .createOr(io.fabric8.kubernetes.client.dsl.NonDeletingOperation::update);
    Path kubeconfig =
        Files.writeString(
            dir.resolve("kubeconfig"),
            """
        apiVersion: v1
        kind: Config
        clusters: [{name: mock, cluster: {server: "%s", insecure-skip-tls-verify: true}}]
        users: [{name: mock, user: {token: mock}}]
        contexts: [{name: mock, context: {cluster: mock, user: mock}}]
        current-context: mock
        """
                .formatted(client.getMasterUrl()));
    Path log = dir.resolve("extender.log");
    // settings from a config file, one of them overridden by the environment
    Path config =
        Files.writeString(
            dir.resolve("kse.yaml"),
            String.join(
                "\n",
                "KSE_HTTP_HOST: 127.0.0.1",
                "KSE_HTTP_PORT: 1",
                "KSE_POLICY_FILE: "
                    + Path.of("../testing/slurm/policy-partition.yaml").toAbsolutePath(),
                "KSE_POD_FIELD_SELECTOR: false",
                "KSE_SLURM_URL: " + cluster.restUrl(),
                "KSE_SLURM_JWT_FILE: " + cluster.env("KSE_LAB_JWT_FILE"),
                ""));
    ProcessBuilder pb =
        new ProcessBuilder("java", "-jar", jar.toString(), "serve", "--config", config.toString())
            .redirectErrorStream(true)
            .redirectOutput(log.toFile());
    // the service refuses unknown KSE_* settings: none of the build's own (./kse sets some) leak in
    // — found when CI ran this test under ./kse test
    pb.environment().keySet().removeIf(k -> k.startsWith("KSE_"));
    pb.environment()
        .putAll(
            Map.of(
                "KUBECONFIG",
                kubeconfig.toString(),
                "KSE_HTTP_PORT",
                "18889",
                "KSE_OPS_PORT",
                "18890"));
    Process p = pb.start();
    try {
      String base = "http://127.0.0.1:18890"; // health, readiness, metrics: the ops listener
      await().atMost(Duration.ofSeconds(120)).until(() -> status(base + "/readyz") == 200);
      assertThat(status(base + "/healthz")).isEqualTo(200);
      assertThat(body(base + "/metrics"))
          .contains("kse_slurm_cache_age_seconds")
          .contains("kse_slurm_request_duration_seconds");
      assertThat(status(base + "/explain/serving/nope")).isEqualTo(404);
      assertThat(body("http://127.0.0.1:18889/filter"))
          .as("GET on a POST route of the verbs' listener")
          .contains("not allowed on /filter");
      assertThat(status("http://127.0.0.1:18889/metrics"))
          .as("the verbs' listener serves nothing else")
          .isEqualTo(404);
    } finally {
      p.destroy(); // SIGTERM: the shutdown hook stops readiness, the server, informers and the
      // client
      assertThat(p.waitFor(30, TimeUnit.SECONDS)).as("exits after SIGTERM").isTrue();
    }
    String out = Files.readString(log);
    assertThat(out)
        .contains("slurm_connected")
        .containsPattern("cluster_identity id=k8s-[0-9a-f]{20} configured=false")
        .contains("listening host=127.0.0.1 port=18889")
        .contains("stopped");

    Process v = new ProcessBuilder("java", "-jar", jar.toString(), "--version").start();
    assertThat(new String(v.getInputStream().readAllBytes()))
        .startsWith("kube-slurm-extender 0.1.0-SNAPSHOT");
  }

  @Test
  void aStartupFailureExitsOneWithOneClearLine(@TempDir Path dir) throws Exception {
    // the port taken: the process lived on with no listener
    Path jar = Path.of("target/kse-scheduler-extender.jar").toAbsolutePath();
    try (java.net.ServerSocket taken = new java.net.ServerSocket(0)) {
      Path config =
          Files.writeString(
              dir.resolve("kse.yaml"),
              String.join(
                  "\n",
                  "KSE_HTTP_PORT: " + taken.getLocalPort(),
                  "KSE_OPS_PORT: 0",
                  "KSE_POLICY_FILE: "
                      + Path.of("../testing/slurm/policy-partition.yaml").toAbsolutePath(),
                  "KSE_SLURM_URL: http://127.0.0.1:1",
                  "KSE_SLURM_JWT: x",
                  ""));
      ProcessBuilder pb =
          new ProcessBuilder(
              "java", "-jar", jar.toString(), "serve", "--config", config.toString());
      pb.environment().keySet().removeIf(k -> k.startsWith("KSE_"));
      pb.redirectErrorStream(false);
      Process p = pb.start();
      String err = new String(p.getErrorStream().readAllBytes());
      assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
      assertThat(p.exitValue()).isEqualTo(1);
      assertThat(err).contains("kse-scheduler-extender: cannot start:");
    }
  }
}
