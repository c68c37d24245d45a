package io.kse.policy.cli.replay;

import static org.assertj.core.api.Assertions.assertThat;

import io.kse.policy.cli.PolicyCli;
import io.kse.policy.replay.Trace;
import io.kse.policy.replay.TraceCodec;
import java.io.PrintWriter;
import java.io.StringReader;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * {@code kse-policy record} on two hand-made listings of one period (the later one knows how the
 * jobs ended) and a pod listing that still has one of the two inference pods.
 */
class TraceRecorderTest {
  private final StringWriter out = new StringWriter();
  private final StringWriter err = new StringWriter();

  private static String res(String name) {
    Path p = Path.of("src/test/resources/record", name);
    return (Files.exists(p) ? p : Path.of("policy-cli").resolve(p)).toString();
  }

  private int record(String... extra) {
    String[] args = new String[extra.length + 1];
    args[0] = "record";
    System.arraycopy(extra, 0, args, 1, extra.length);
    return PolicyCli.run(new PrintWriter(out), new PrintWriter(err), args);
  }

  @Test
  void placeholdersBecomeArrivalsAndOtherJobsTrainingWithTheLaterListingWinning() {
    assertThat(
            record(
                "--jobs", res("jobs-early.json"),
                "--jobs", res("jobs-late.json"),
                "--pods", res("pods.json"),
                "--policy", inRepo("testing/slurm/policy-qos.yaml")))
        .as(err.toString())
        .isZero();
    Trace t = TraceCodec.read(new StringReader(out.toString()));

    // the period: from the first submission (job 11) to the last event (job 11's end) + 1 s
    assertThat(t.header().source()).isEqualTo("recorded");
    assertThat(t.header().length()).isEqualTo(Duration.ofSeconds(7211));
    assertThat(t.slurmJobs()).extracting(Trace.SlurmJob::id).containsExactly("11", "14");
    Trace.SlurmJob pretrain = t.slurmJobs().get(0);
    assertThat(pretrain.at()).isZero();
    assertThat(pretrain.user()).isEqualTo("alice");
    assertThat(pretrain.nodes()).isEqualTo(2);
    assertThat(pretrain.gpusPerNode()).isEqualTo(8);
    assertThat(pretrain.runtime()).as("start to end").isEqualTo(Duration.ofSeconds(7200));
    Trace.SlurmJob sweep = t.slurmJobs().get(1);
    assertThat(sweep.runtime())
        .as("never started: the rest of the period")
        .isEqualTo(Duration.ofSeconds(2211));

    assertThat(t.inference()).hasSize(2);
    Trace.Inference a = t.inference().get(0);
    assertThat(a.id()).isEqualTo("serving/llm-a");
    assertThat(a.at()).isEqualTo(Duration.ofSeconds(600));
    assertThat(a.lifetime()).as("submitted to cancelled").isEqualTo(Duration.ofSeconds(1800));
    assertThat(a.gpus()).isEqualTo(4);
    assertThat(a.labels()).isEqualTo(Map.of("app", "llm"));
    assertThat(a.priorityClassName()).contains("inference");
    Trace.Inference b = t.inference().get(1);
    assertThat(b.lifetime())
        .as("still pending: to the period's end")
        .isEqualTo(Duration.ofSeconds(3211));
    assertThat(b.priorityClassName()).isEqualTo(Optional.empty());
    assertThat(b.annotations())
        .as("its pod is gone: the tier Slurm recorded")
        .containsEntry("kse.io/tier", "inference-critical");
    assertThat(err.toString())
        .contains("recorded 2 inference arrivals and 2 other jobs")
        .contains("1 placeholder(s) outlived their pod's listing")
        .contains("1 other job(s) never started");
  }

  @Test
  void aListingThatIsNotSlurmsIsRefusedNamingTheFile() {
    assertThat(record("--jobs", res("pods.json"))).isEqualTo(PolicyCli.INVALID);
    assertThat(err.toString()).contains("pods.json: expected a slurmrestd jobs answer");
  }

  /** A file of the repository, from the module's directory or the repository's. */
  private static String inRepo(String path) {
    return (Files.exists(Path.of("testing")) ? Path.of(path) : Path.of("..", path)).toString();
  }
}
