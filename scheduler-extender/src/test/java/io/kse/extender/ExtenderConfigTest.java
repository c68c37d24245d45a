package io.kse.extender;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kse.slurm.JobSubmission;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ExtenderConfigTest {
  static Map<String, String> minimal() {
    Map<String, String> env = new HashMap<>();
    env.put("KSE_POLICY_FILE", "/etc/kse/policy.yaml");
    env.put("KSE_SLURM_URL", "http://slurmrestd:6820");
    env.put("KSE_SLURM_JWT_FILE", "/var/run/secrets/slurm/jwt");
    return env;
  }

  @Test
  void hasDefaultsForAllButThePolicyAndSlurm() {
    ExtenderConfig c = ExtenderConfig.fromEnv(minimal());
    assertThat(c.port()).isEqualTo(8888);
    assertThat(c.schedulerName()).isEqualTo("slurm-inference");
    assertThat(c.policyReload()).isEqualTo(Duration.ofSeconds(5));
    assertThat(c.placeholderShape()).isEqualTo(JobSubmission.Shape.BATCH);
    assertThat(c.podFieldSelector()).isTrue();
    assertThat(c.slurm().url().getHost()).isEqualTo("slurmrestd");
  }

  @Test
  void reportsEveryProblemNamingTheVariable() {
    Map<String, String> env = new HashMap<>();
    env.put("KSE_HTTP_PORT", "99999");
    env.put("KSE_PLACEHOLDER_SHAPE", "sleeper");
    env.put("KSE_POD_FIELD_SELECTOR", "yes");
    env.put("KSE_HTPP_PORT", "1");
    env.put("KSE_LAB_DIR", "/tmp/x"); // the test harness's variables are not ours to judge
    assertThatThrownBy(() -> ExtenderConfig.fromEnv(env))
        .hasMessageContaining("KSE_HTTP_PORT='99999': expected a whole number from 1 to 65535")
        .hasMessageContaining("KSE_PLACEHOLDER_SHAPE='sleeper': expected batch or external")
        .hasMessageContaining("KSE_POD_FIELD_SELECTOR='yes': expected true or false")
        .hasMessageContaining("KSE_HTPP_PORT: unknown variable")
        .hasMessageContaining("KSE_POLICY_FILE: required")
        .hasMessageContaining("KSE_SLURM_URL: required")
        .satisfies(e -> assertThat(e.getMessage()).doesNotContain("KSE_LAB_DIR"));
  }
}
