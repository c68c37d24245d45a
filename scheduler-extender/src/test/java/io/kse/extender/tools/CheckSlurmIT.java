package io.kse.extender.tools;

import static org.assertj.core.api.Assertions.assertThat;

import io.kse.slurm.testing.LocalSlurmCluster;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** check-slurm against the real local clusters, in both preemption modes. */
class CheckSlurmIT {
  private final StringWriter out = new StringWriter();
  private final StringWriter err = new StringWriter();

  private int run(LocalSlurmCluster c, Path policy) {
    Map<String, String> env =
        Map.of(
            "KSE_SLURM_URL", c.restUrl().toString(),
            "KSE_SLURM_USER", c.env("KSE_LAB_JWT_USER"),
            "KSE_SLURM_JWT_FILE", c.env("KSE_LAB_JWT_FILE"));
    return CheckSlurm.run(
        env, new PrintWriter(out), new PrintWriter(err), "--policy", policy.toString());
  }

  static Path repoFile(String rel) {
    Path p = Path.of(rel);
    return Files.exists(p) ? p : Path.of("..").resolve(rel);
  }

  @Test
  void thePartitionPolicyAgreesWithThePartitionCluster() {
    LocalSlurmCluster c = LocalSlurmCluster.shared(LocalSlurmCluster.Mode.PARTITION);
    assertThat(run(c, repoFile("testing/slurm/policy-partition.yaml")))
        .as(out + "\n" + err)
        .isZero();
    assertThat(out.toString())
        .contains("Slurm agrees with the policy")
        .contains("ReturnToService=1");
  }

  @Test
  void aPolicyThatDisagreesIsListed(@TempDir Path dir) throws Exception {
    LocalSlurmCluster c = LocalSlurmCluster.shared(LocalSlurmCluster.Mode.PARTITION);
    Path p =
        Files.writeString(
            dir.resolve("p.yaml"),
            Files.readString(repoFile("testing/slurm/policy-partition.yaml"))
                .replace("partition: inference", "partition: serving"));
    assertThat(run(c, p)).isEqualTo(1);
    assertThat(out.toString())
        .contains("DIFF tier inference: partition serving does not exist in Slurm");
  }

  @Test
  void theQosPolicyAgreesWithTheAccountingCluster() {
    LocalSlurmCluster c = LocalSlurmCluster.shared(LocalSlurmCluster.Mode.ACCOUNTING);
    assertThat(run(c, repoFile("testing/slurm/policy-qos.yaml"))).as(out + "\n" + err).isZero();
  }

  @Test
  void qosDriftIsListed(@TempDir Path dir) throws Exception {
    LocalSlurmCluster c = LocalSlurmCluster.shared(LocalSlurmCluster.Mode.ACCOUNTING);
    Path p =
        Files.writeString(
            dir.resolve("q.yaml"),
            Files.readString(repoFile("testing/slurm/policy-qos.yaml"))
                .replace("graceTime: 2s", "graceTime: 30s")
                .replace("training-protected: 5m", "training-protected: 10m"));
    assertThat(run(c, p)).isEqualTo(1);
    assertThat(out.toString())
        .contains("DIFF tier training: graceTime 00:00:30, but QoS training has GraceTime=2")
        .contains(
            "DIFF tier training-protected: minRuntime 00:10:00, but QoS training-protected has PreemptExemptTime=00:05:00");
  }

  @Test
  void aQosPolicyAgainstAClusterWithoutSlurmdbdSaysWhy() {
    LocalSlurmCluster c = LocalSlurmCluster.shared(LocalSlurmCluster.Mode.PARTITION);
    assertThat(run(c, repoFile("testing/slurm/policy-qos.yaml"))).isEqualTo(2);
    assertThat(err.toString()).contains("QoS definitions come from slurmdbd");
  }
}
