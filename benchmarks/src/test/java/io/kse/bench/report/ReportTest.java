package io.kse.bench.report;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The report reads the raw lines as the tiers write them, and writes both files from them. */
class ReportTest {
  @TempDir Path dir;

  Raw raw(String... files) throws Exception {
    Path r = Files.createDirectories(dir.resolve("raw"));
    for (int i = 0; i < files.length; i += 2) {
      Files.writeString(r.resolve(files[i]), files[i + 1]);
    }
    return new Raw(r);
  }

  @Test
  void aFigureIsItsLastLineAndAMissingOneIsEmpty() throws Exception {
    Raw r = raw("e2e.txt", "n32.ttb_p50_ms=900\nn32.ttb_p50_ms=812\n", "tpu.txt", "tpu.x=1\n");
    assertThat(r.v("n32.ttb_p50_ms")).isEqualTo("812");
    assertThat(r.v("tpu.x")).isEqualTo("1");
    assertThat(r.v("n32.nothing")).isEmpty();
  }

  @Test
  void aScaleFigureComesFromTheRowOfAboutThatManyJobs() throws Exception {
    Raw r =
        raw(
            "scale.txt",
            "scale tag=n10000 background_jobs=4999 bytes_read=29440225.0\n"
                + "scale tag=n10000 background_jobs=20000 bytes_read=5190261.8\n"
                + "scale tag=n10000 background_jobs=50001 bytes_read=5188636.2\n");
    assertThat(r.scale(5000, "bytes_read")).isEqualTo("29440225.0");
    assertThat(r.scale(50000, "bytes_read")).isEqualTo("5188636.2");
    assertThat(r.scale(30000, "bytes_read")).isEmpty();
    assertThat(r.v("scale tag")).as("rows are not figures").isEmpty();
  }

  @Test
  void ratiosNeedTwoPositiveFiguresAndJsonTakesOnlyPlainNumbers() {
    assertThat(Fmt.ratio("1565", "1568")).isEqualTo("1.00");
    assertThat(Fmt.ratio("", "1568")).isEqualTo("-");
    assertThat(Fmt.json("0.25")).isEqualTo("0.25");
    assertThat(Fmt.json("")).isEqualTo("null");
    assertThat(Fmt.json("-1")).isEqualTo("null");
    assertThat(Fmt.mb("5190261.8", 2)).isEqualTo("5.19");
  }

  @Test
  void theFilterFigureIsFoundWhenAnotherBenchmarkAddsAParameterColumn() throws Exception {
    // JMH writes one table: HintedReadBenchmark's (placeholders) column is N/A in the filter rows
    raw(
        "jmh.txt",
        "Benchmark  (nodes)  (placeholders)  (pod)  Mode  Cnt  Score  Error  Units\n"
            + "HintedReadBenchmark.hintedRead  N/A  5000  N/A  avgt  5  9.5 ± 1.0  us/op\n"
            + "FilterPathBenchmark.filter:p0.99  5000  N/A  allocated  sample  809.984  us/op\n"
            + "FilterPathBenchmark.filter:p0.99  5000  N/A  waiting  sample  900.1  us/op\n");
    Report.main(new String[] {dir.toString(), "2 cores", "openjdk 17"});
    assertThat(Files.readString(dir.resolve("results.json")))
        .contains("\"filter_p99_us_5000_names\": 809.984");
  }

  @Test
  void bothFilesAreWrittenFromTheSameFigures() throws Exception {
    raw(
        "e2e.txt",
        "n32.ttb_p50_ms=812\nn32.cpu_ms_per_pod.ours.extender=36.2\n",
        "jmh.txt",
        "Benchmark  (names) (state) Mode Score\n"
            + "FilterPathBenchmark.filter:p0.99  5000  allocated  sample  411.6  us/op\n",
        "e2e.date",
        "2026-11-27T08:18Z\n");
    Report.main(new String[] {dir.toString(), "2 cores", "openjdk 17"});
    String json = Files.readString(dir.resolve("results.json"));
    String md = Files.readString(dir.resolve("RESULTS.md"));
    assertThat(json).contains("\"ttb_p50_ms\": 812", "\"filter_p99_us_5000_names\": 411.6");
    assertThat(json).contains("\"pods_per_s\": null");
    assertThat(md)
        .contains("e2e 2026-11-27T08:18Z")
        .contains("| time-to-bind, 200 pods on free capacity, 32 nodes: p50 / p99 | 812 /  ms |")
        .contains("| extender | ")
        .contains("| filter path p99, in-process, 5,000 names (JMH) | 411.6 µs |");
  }
}
