package io.kse.policy.cli.replay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.kse.policy.cli.PolicyCli;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 31's replay on a real scratch Slurm 26.05 with external nodes: a hand-made trace (8
 * training jobs hold all 8 nodes, 6 inference pods of 8 GPUs arrive 2 minutes apart, 25 minutes at
 * 30× in under a minute per policy) replayed under a baseline that may preempt without limit and a
 * candidate with a budget of 16 GPUs an hour. Slurm decides every preemption; the candidate's
 * budget must make it preempt fewer training jobs than the baseline, beyond the baseline's own
 * noise, and the report must say so. Runs where {@code KSE_LAB_SLURM=26.05} ({@code ./kse test}'s
 * newer-Slurm stage).
 */
class ReplayIT {
  @TempDir Path tmp;

  @Test
  void aStricterBudgetPreemptsFewerTrainingJobsAndTheReportSaysSo() throws Exception {
    assumeTrue(
        "26.05".equals(System.getenv("KSE_LAB_SLURM")),
        "replay needs Slurm 26.05 (KSE_LAB_SLURM=26.05, as ./kse test's newer-Slurm stage sets)");
    Path res = Path.of("src/test/resources/replay").toAbsolutePath();
    Path html = tmp.resolve("replay.html");
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int code =
        PolicyCli.run(
            new PrintWriter(out),
            new PrintWriter(err),
            "replay",
            "--trace",
            res.resolve("budget.jsonl").toString(),
            "--policy",
            res.resolve("strict-budget.yaml").toString(),
            "--baseline",
            res.resolve("baseline.yaml").toString(),
            "--speed",
            "30",
            "--nodes",
            "8",
            "--html",
            html.toString(),
            "--dir",
            "/tmp/kse-replay-it",
            "--port-offset",
            "40",
            "--slurm-cluster",
            res.resolve("../../../../../testing/slurm/slurm-cluster").normalize().toString());
    String report = out.toString();
    assertThat(code).as("exit code; stderr:\n%s\nstdout:\n%s", err, report).isZero();

    int[] preempted = row(report, "training jobs preempted");
    // baseline, candidate, baseline again: the budget of 16 GPUs lets exactly two 8-GPU
    // preemptions through; without it every arrival that finds no free node preempts
    assertThat(preempted[1]).as(report).isEqualTo(2);
    assertThat(preempted[0]).as(report).isGreaterThanOrEqualTo(4);
    assertThat(preempted[2]).as(report).isGreaterThanOrEqualTo(4);
    assertThat(row(report, "budget refusals")[1]).as(report).isGreaterThanOrEqualTo(3);
    assertThat(report)
        .contains("strict-budget.yaml preempts")
        .contains("fewer training jobs than baseline.yaml");

    String page = Files.readString(html);
    assertThat(page).contains("What differs", "fewer training jobs than baseline.yaml");
    assertThat(page.split("<svg", -1)).as("two plots per policy replayed").hasSize(7);
  }

  /** The figures of one table row, one per policy, in column order. */
  private static int[] row(String report, String label) {
    Matcher m =
        Pattern.compile("(?m)^" + Pattern.quote(label) + "\\s+(\\d+)\\s+(\\d+)\\s+(\\d+)\\s*$")
            .matcher(report);
    assertThat(m.find()).as("row '%s' in:\n%s", label, report).isTrue();
    return new int[] {
      Integer.parseInt(m.group(1)), Integer.parseInt(m.group(2)), Integer.parseInt(m.group(3))
    };
  }
}
