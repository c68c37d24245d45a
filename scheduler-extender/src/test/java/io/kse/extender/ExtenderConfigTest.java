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
  void everyVariableTheServiceReadsIsDeclaredAndAccepted() throws Exception {
    String source =
        java.nio.file.Files.readString(
            java.nio.file.Path.of("src/main/java/io/kse/extender/ExtenderConfig.java"));
    java.util.regex.Matcher m =
        java.util.regex.Pattern.compile("\"(KSE_[A-Z_]+)\"").matcher(source);
    java.util.Set<String> read = new java.util.TreeSet<>();
    while (m.find()) {
      if (!m.group(1).startsWith("KSE_SLURM_")
          && !m.group(1).endsWith("_")) { // prefixes, not names
        read.add(m.group(1));
      }
    }
    assertThat(ExtenderConfig.VARIABLES.keySet()).containsAll(read);
    Map<String, String> env = minimal();
    env.put("KSE_LEADER_ELECTION", "false");
    env.put("KSE_DRAIN_VIA", "scontrol");
    env.put("KSE_SCONTROL_CONF", "/etc/slurm/slurm.conf");
    env.put("KSE_LOG_LEVEL", "DEBUG");
    ExtenderConfig c = ExtenderConfig.fromEnv(env);
    assertThat(c.leaderElection()).isFalse();
    assertThat(c.drainVia()).isEqualTo(ExtenderConfig.DrainVia.SCONTROL);
  }

  /** Issue 44: the writer Lease's identity carries where the standbys pass hints on. */
  @Test
  void theLeaseIdentityCarriesTheAdvertisedOpsAddress() {
    Map<String, String> env = minimal();
    env.put("POD_NAME", "kse-scheduler-7d9f-abcde");
    assertThat(ExtenderConfig.fromEnv(env).leaseIdentity()).isEqualTo("kse-scheduler-7d9f-abcde");
    env.put("POD_IP", "10.1.2.3");
    assertThat(ExtenderConfig.fromEnv(env).leaseIdentity())
        .isEqualTo("kse-scheduler-7d9f-abcde@10.1.2.3:8889");
    env.put("POD_IP", "fd00::7");
    assertThat(ExtenderConfig.fromEnv(env).leaseIdentity()).endsWith("@[fd00::7]:8889");
    env.put("KSE_OPS_ADVERTISE", "kse-0.kse.svc:9000");
    assertThat(ExtenderConfig.fromEnv(env).leaseIdentity()).endsWith("@kse-0.kse.svc:9000");
    env.put("KSE_OPS_ADVERTISE", "http://kse-0:9000/");
    assertThatThrownBy(() -> ExtenderConfig.fromEnv(env))
        .hasMessageContaining("KSE_OPS_ADVERTISE='http://kse-0:9000/': expected host:port");
  }

  @Test
  void reportsEveryProblemNamingTheVariable() {
    Map<String, String> env = new HashMap<>();
    env.put("KSE_HTTP_PORT", "99999");
    env.put("KSE_PLACEHOLDER_SHAPE", "sleeper");
    env.put("KSE_POD_FIELD_SELECTOR", "yes");
    env.put("KSE_HTPP_PORT", "1");
    env.put("KSE_LOG_FORMAT", "xml"); // logback would write nothing: refused here instead
    env.put("KSE_LAB_DIR", "/tmp/x"); // the test harness's variables: not accepted in production
    assertThatThrownBy(() -> ExtenderConfig.fromEnv(env))
        .hasMessageContaining("KSE_HTTP_PORT='99999': expected a whole number from 1 to 65535")
        .hasMessageContaining("KSE_PLACEHOLDER_SHAPE='sleeper': expected batch or external")
        .hasMessageContaining("KSE_POD_FIELD_SELECTOR='yes': expected true or false")
        .hasMessageContaining("KSE_HTPP_PORT: unknown variable")
        .hasMessageContaining("KSE_LOG_FORMAT='xml': expected text or json")
        .hasMessageContaining("KSE_POLICY_FILE: required")
        .hasMessageContaining("KSE_SLURM_URL: required")
        .hasMessageContaining("KSE_LAB_DIR: unknown variable");
  }
}
