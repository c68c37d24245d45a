package io.kse.slurm.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.kse.slurm.ApiVersion;
import io.kse.slurm.SlurmClient;
import io.kse.slurm.SlurmClients;
import io.kse.slurm.SlurmConfig;
import io.kse.slurm.SlurmRelease;
import io.kse.slurm.testing.LocalSlurmCluster;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 44: Slurm upgraded under a running extender. A client connected to Slurm 22.05's slurmrestd
 * (REST v0.0.38) keeps working, without a restart, once the same address serves Slurm 26.05
 * (v0.0.40-v0.0.45, no v0.0.38): its first refused call finds the version now served, and it says
 * the new release. Real daemons of both: 22.05 on the host, 26.05 from its root; the same JWT key
 * on both, as an upgrade keeps it. Runs with the 26.05 integration tests.
 */
class SlurmUpgradeIT {
  static final Path OLD = Path.of("/tmp/kse-it-upgrade-22");
  static final Path NEW = Path.of("/tmp/kse-it-upgrade-26");
  static final int REST_PORT = 16848;

  static void start(Path dir, String slurm, int basePort) {
    LocalSlurmCluster.run(
        List.of(
            LocalSlurmCluster.script().toString(),
            "start",
            "--dir",
            dir.toString(),
            "--nodes",
            "1",
            "--slurm",
            slurm,
            "--base-port",
            Integer.toString(basePort),
            "--rest-port",
            Integer.toString(REST_PORT)),
        Duration.ofMinutes(10),
        Map.of());
  }

  static void stop(Path dir) {
    LocalSlurmCluster.run(
        List.of(LocalSlurmCluster.script().toString(), "stop", "--dir", dir.toString(), "--purge"),
        Duration.ofMinutes(2),
        Map.of());
  }

  @AfterEach
  void stopBoth() {
    stop(OLD);
    stop(NEW);
  }

  @Test
  void aClientOfSlurm2205KeepsWorkingWhenTheSameAddressServesSlurm2605() throws Exception {
    assumeTrue(
        "26.05".equals(LocalSlurmCluster.version()),
        "runs with the 26.05 integration tests (KSE_LAB_SLURM=26.05: its root is built)");
    stop(OLD);
    stop(NEW);
    start(OLD, "22.05", 17560);
    LocalSlurmCluster old = LocalSlurmCluster.attach(OLD);
    // the token file the extender reads; the upgrade keeps the key that signed it
    Path token = Files.createTempFile("kse-upgrade-jwt", "");
    Files.copy(
        Path.of(old.env("KSE_LAB_JWT_FILE")),
        token,
        java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    SlurmConfig cfg =
        SlurmConfig.of(old.restUrl(), Optional.of(old.env("KSE_LAB_JWT_USER")), token);
    try (SlurmClient client = SlurmClients.connect(cfg, new SimpleMeterRegistry())) {
      assertThat(client.apiVersion()).isEqualTo(ApiVersion.V0038);
      assertThat(client.release()).contains(new SlurmRelease(22, 5, 8));
      assertThat(client.partitions()).isNotEmpty();

      Path key = OLD.resolve("etc/jwt_hs256.key");
      Files.createDirectories(NEW.resolve("etc"));
      Files.copy(
          key, NEW.resolve("etc/jwt_hs256.key"), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
      stop(OLD);
      start(NEW, "26.05", 17580);

      long t0 = System.nanoTime();
      assertThat(client.partitions()).as("the first call after the upgrade").isNotEmpty();
      System.out.printf(
          "[upgrade] 22.05 -> 26.05 under one client: %s after %d ms%n",
          client.apiVersion(), (System.nanoTime() - t0) / 1_000_000);
      assertThat(client.apiVersion()).isNotEqualTo(ApiVersion.V0038);
      client.ping();
      assertThat(client.release()).hasValueSatisfying(r -> assertThat(r.major()).isEqualTo(26));
    }
  }
}
