package io.kse.extender;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ConfigSourcesTest {
  @Test
  void theFileGivesDefaultsAndTheEnvironmentOverrides(@TempDir Path dir) throws Exception {
    Path f =
        Files.writeString(
            dir.resolve("kse.yaml"),
            """
        KSE_POLICY_FILE: /etc/kse/policy.yaml
        KSE_HTTP_PORT: 9999
        KSE_SLURM_URL: http://slurmrestd:6820
        KSE_SLURM_JWT_FILE: /var/run/secrets/slurm/jwt
        """);
    Map<String, String> merged =
        ConfigSources.merge(Optional.of(f), Map.of("KSE_HTTP_PORT", "7777", "HOME", "/root"));
    ExtenderConfig c = ExtenderConfig.fromEnv(merged);
    assertThat(c.port()).as("the environment wins").isEqualTo(7777);
    assertThat(c.policyFile()).isEqualTo(Path.of("/etc/kse/policy.yaml"));
    assertThat(c.slurm().url().getPort()).isEqualTo(6820);
  }

  @Test
  void aBadFileSaysWhatIsWrongWithIt(@TempDir Path dir) throws Exception {
    assertThatThrownBy(() -> ConfigSources.merge(Optional.of(dir.resolve("none.yaml")), Map.of()))
        .hasMessageContaining("none.yaml: cannot read it");
    Path list = Files.writeString(dir.resolve("list.yaml"), "- a\n");
    assertThatThrownBy(() -> ConfigSources.merge(Optional.of(list), Map.of()))
        .hasMessageContaining("expected a mapping of KSE_* settings");
    Path foreign = Files.writeString(dir.resolve("foreign.yaml"), "port: 1\n");
    assertThatThrownBy(() -> ConfigSources.merge(Optional.of(foreign), Map.of()))
        .hasMessageContaining("port is not a setting");
    Path nested = Files.writeString(dir.resolve("nested.yaml"), "KSE_HTTP_PORT: {a: 1}\n");
    assertThatThrownBy(() -> ConfigSources.merge(Optional.of(nested), Map.of()))
        .hasMessageContaining("KSE_HTTP_PORT must be a single value");
    Path typo =
        Files.writeString(
            dir.resolve("typo.yaml"),
            "KSE_HTTP_PROT: 1\nKSE_POLICY_FILE: /p\n"
                + "KSE_SLURM_URL: http://s:1\nKSE_SLURM_JWT: t\n");
    assertThatThrownBy(
            () -> ExtenderConfig.fromEnv(ConfigSources.merge(Optional.of(typo), Map.of())))
        .hasMessageContaining("KSE_HTTP_PROT: unknown variable");
  }
}
