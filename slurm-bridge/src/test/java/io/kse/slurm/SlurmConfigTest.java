package io.kse.slurm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

class SlurmConfigTest {
  @Test
  void readsEveryVariable() {
    SlurmConfig c =
        SlurmConfig.fromEnv(
            Map.of(
                "KSE_SLURM_URL", "http://slurmrestd:6820",
                "KSE_SLURM_JWT_FILE", "/var/run/secrets/slurm/jwt",
                "KSE_SLURM_API_VERSION", "v0.0.42",
                "KSE_SLURM_TIMEOUT_MS", "3000",
                "KSE_SLURM_MAX_IN_FLIGHT", "8",
                "HOME", "/root"));
    assertThat(c.url().getPort()).isEqualTo(6820);
    assertThat(c.apiVersion()).contains(ApiVersion.V0042);
    assertThat(c.requestTimeout()).isEqualTo(Duration.ofSeconds(3));
    assertThat(c.maxInFlight()).isEqualTo(8);
    assertThat(c.cadence().poll()).isEqualTo(Duration.ofMillis(500));
  }

  @Test
  void reportsEveryProblemAtOnceNamingTheVariable() {
    assertThatThrownBy(
            () ->
                SlurmConfig.fromEnv(
                    Map.of(
                        "KSE_SLURM_URL", "ftp://x",
                        "KSE_SLURM_TIMEOUT_MS", "abc",
                        "KSE_SLURM_API_VERSION", "v0.0.39",
                        "KSE_SLURM_TIMEOUTMS", "1")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("KSE_SLURM_URL='ftp://x': expected an http:// or https:// URL")
        .hasMessageContaining(
            "KSE_SLURM_TIMEOUT_MS='abc': expected a positive whole number of milliseconds")
        .hasMessageContaining("KSE_SLURM_API_VERSION='v0.0.39': unknown slurmrestd API version")
        .hasMessageContaining("KSE_SLURM_TIMEOUTMS: unknown variable")
        .hasMessageContaining("KSE_SLURM_JWT_FILE or KSE_SLURM_JWT: one is required");
  }

  @Test
  void aBadCaFileIsRefusedAtConfigurationTime(
      @org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
    // it killed the connector thread at run time: the service stayed up and never ready
    java.nio.file.Path ca = java.nio.file.Files.writeString(dir.resolve("ca.pem"), "not a cert");
    assertThatThrownBy(
            () ->
                SlurmConfig.fromEnv(
                    Map.of(
                        "KSE_SLURM_URL", "https://slurm:6820",
                        "KSE_SLURM_JWT", "t",
                        "KSE_SLURM_CA_FILE", ca.toString())))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("KSE_SLURM_CA_FILE=" + ca);
  }

  @Test
  void neverPrintsTheToken() {
    SlurmConfig c =
        SlurmConfig.fromEnv(Map.of("KSE_SLURM_URL", "http://h:1", "KSE_SLURM_JWT", "secret-token"));
    assertThat(c.toString()).doesNotContain("secret-token").contains("(inline, hidden)");
  }
}
