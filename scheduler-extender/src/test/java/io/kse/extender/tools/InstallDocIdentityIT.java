package io.kse.extender.tools;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.kse.slurm.JobState;
import io.kse.slurm.SlurmClient;
import io.kse.slurm.SlurmClients;
import io.kse.slurm.SlurmConfig;
import io.kse.slurm.SlurmJob;
import io.kse.slurm.testing.LocalSlurmCluster;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * docs/install.md's "The Slurm identity", run as written against the real Slurm with accounting
 * (22.05, slurmdbd): the user, its account and QoS (step 2), the operator level (step 3) and the
 * token (step 4, its Kubernetes lines left to HelmE2E). Then the extender's own client, with that
 * token and nothing else, places and cancels a placeholder as that user, and check-slurm agrees
 * with the QoS policy. The doc's commands are read from the doc: a change there is tested here.
 */
class InstallDocIdentityIT {
  static final String USER = "kse-placeholder";

  static LocalSlurmCluster cluster = LocalSlurmCluster.shared(LocalSlurmCluster.Mode.ACCOUNTING);

  /** A machine's own user of that name (a real install) is never removed by this test. */
  static final boolean USER_WAS_THERE = !shell("id -u " + USER + " 2>/dev/null").isBlank();

  @AfterAll
  static void forgetTheUser() {
    cluster.cancelAll();
    // the test cluster's own accounting database; the machine's user only if this test made it
    shell(
        "sacctmgr -i delete user "
            + USER
            + "; sacctmgr -i delete account kse"
            + (USER_WAS_THERE ? "" : "; userdel " + USER));
  }

  @Test
  void theDocsStepsGiveAUserTheExtenderCanWorkAs(@TempDir Path dir) throws Exception {
    String section = section(Files.readString(CheckSlurmIT.repoFile("docs/install.md")));
    List<String> blocks = shellBlocks(section);
    assertThat(blocks).as("the section's sh blocks: JWT, the user, the token").hasSize(3);

    // step 2 as written, on a machine that may have run it before (useradd then refuses)
    shell(blocks.get(1));
    assertThat(shell("id -u " + USER)).as("the Slurm user exists on slurmctld's host").isNotBlank();
    assertThat(shell("sacctmgr -nP show assoc user=" + USER + " format=account,qos"))
        .as("its association")
        .contains("kse|")
        .contains("inference-critical");

    // step 3: the operator level, written inline in the doc
    Matcher operator =
        Pattern.compile("`(sacctmgr -i modify user " + USER + " set\\s+adminlevel=operator)`")
            .matcher(section);
    assertThat(operator.find()).as("step 3's command in the doc").isTrue();
    shell(operator.group(1).replaceAll("\\s+", " "));
    assertThat(shell("sacctmgr -nP show user " + USER + " format=adminlevel"))
        .containsIgnoringCase("operator");

    // step 4: the token, minted as written into the file the Secret is made from
    String mint =
        blocks.get(2).lines().filter(l -> l.startsWith("scontrol token")).findFirst().orElseThrow();
    shell("cd " + dir + " && " + mint);
    Path jwt = dir.resolve("jwt");
    assertThat(Files.readString(jwt)).as("a bare token, as the Secret holds it").startsWith("eyJ");

    SlurmClient slurm =
        SlurmClients.connect(
            SlurmConfig.of(cluster.restUrl(), Optional.of(USER), jwt), new SimpleMeterRegistry());
    long id =
        slurm.submit(
            cluster
                .placeholder("identity")
                .partition("inference")
                .qos("inference")
                .gresPerNode("gpu:h100:1")
                .build());
    await("the placeholder runs")
        .atMost(Duration.ofSeconds(20))
        .until(() -> slurm.job(id).map(SlurmJob::state).orElse(null) == JobState.RUNNING);
    SlurmJob j = slurm.job(id).orElseThrow();
    assertThat(j.user()).as("submitted as the doc's user").isEqualTo(USER);
    // the operator level lets it drain over REST v0.0.41+ (SlurmBridgeIT on 24.11 and 26.05);
    // accounting runs here on 22.05, whose v0.0.38 has no node update: sacctmgr said it above
    slurm.cancel(id);

    StringWriter out = new StringWriter();
    int code =
        CheckSlurm.run(
            Map.of(
                "KSE_SLURM_URL", cluster.restUrl().toString(),
                "KSE_SLURM_USER", USER,
                "KSE_SLURM_JWT_FILE", jwt.toString()),
            new PrintWriter(out),
            new PrintWriter(out),
            "--policy",
            CheckSlurmIT.repoFile("testing/slurm/policy-qos.yaml").toString());
    assertThat(code).as(out.toString()).isZero();
  }

  /** The text under "## The Slurm identity", to the next section. */
  static String section(String doc) {
    int from = doc.indexOf("## The Slurm identity");
    assertThat(from).as("docs/install.md has the section").isNotNegative();
    int to = doc.indexOf("\n## ", from + 1);
    return doc.substring(from, to < 0 ? doc.length() : to);
  }

  /** The section's ```sh blocks, each without its list indentation. */
  static List<String> shellBlocks(String section) {
    List<String> blocks = new ArrayList<>();
    Matcher m = Pattern.compile("(?m)^( *)```sh\\n(.*?)^ *```", Pattern.DOTALL).matcher(section);
    while (m.find()) {
      String indent = m.group(1);
      StringBuilder b = new StringBuilder();
      m.group(2)
          .lines()
          .forEach(
              l -> b.append(l.startsWith(indent) ? l.substring(indent.length()) : l).append('\n'));
      blocks.add(b.toString());
    }
    return blocks;
  }

  /** Runs {@code script} with bash as root against the cluster; returns stdout (failures too). */
  static String shell(String script) {
    try {
      return LocalSlurmCluster.run(
          List.of("bash", "-c", script + "\ntrue"),
          Duration.ofSeconds(60),
          Map.of("SLURM_CONF", cluster.env("SLURM_CONF")));
    } catch (IllegalStateException e) {
      throw new AssertionError(script, e);
    }
  }
}
