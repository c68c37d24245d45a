package io.kse.extender;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The composition root's order: what starts first stops last. */
@EnableKubernetesMockClient(crud = true)
class ExtenderServiceTest {
  static KubernetesClient client;

  static int freePort() throws Exception {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  @Test
  void aStartWaitsForItsListingToTimeOutBeforeItGivesUp() {
    // the production listing may take ten minutes; the start used to give up after five
    assertThat(ExtenderService.syncLimit(Duration.ofMinutes(10))).isEqualTo(Duration.ofMinutes(11));
    assertThat(ExtenderService.syncLimit(Duration.ofSeconds(30)))
        .isEqualTo(ExtenderService.MIN_SYNC_LIMIT);
  }

  @Test
  void theWorkersDrainBeforeThePodActionsTheyUseAreClosed(@TempDir Path dir) throws Exception {
    // shutdown closed the pod actions (their Event queue and eviction client) while workers
    // could still be using them
    Path policy =
        Files.writeString(
            dir.resolve("policy.yaml"),
            Files.readString(Path.of("../testing/slurm/policy-partition.yaml")));
    ExtenderConfig cfg =
        ExtenderConfig.fromEnv(
            Map.of(
                "KSE_POLICY_FILE",
                policy.toString(),
                "KSE_HTTP_PORT",
                Integer.toString(freePort()),
                "KSE_OPS_PORT",
                Integer.toString(freePort()),
                "KSE_SLURM_URL",
                "http://127.0.0.1:1",
                "KSE_SLURM_JWT",
                "not-a-token",
                "KSE_LEADER_ELECTION",
                "false"));
    try (ExtenderService service = new ExtenderService(cfg, client, Clock.systemUTC()).start()) {
      List<String> order = service.stopOrder();
      assertThat(order.indexOf("workers")).isLessThan(order.indexOf("pod-actions"));
      assertThat(order.indexOf("readiness"))
          .as("stop being ready before the listeners go")
          .isLessThan(order.indexOf("verb-listener"))
          .isLessThan(order.indexOf("ops-listener"));
      assertThat(order.indexOf("routes"))
          .as("the verb pools go once neither listener hands them work")
          .isGreaterThan(order.indexOf("verb-listener"))
          .isGreaterThan(order.indexOf("ops-listener"));
      assertThat(order.get(order.size() - 1)).isEqualTo("kubernetes-client");
    }
  }
}
