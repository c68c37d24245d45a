package io.kse.bench.report;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;

/**
 * Writes {@code benchmarks/RESULTS.md} and {@code benchmarks/results.json} from the raw lines in
 * {@code benchmarks/raw/}: one reader of the figures for both. {@code benchmarks/run} calls it
 * after every tier (and alone with {@code report}).
 *
 * <pre>
 * java -cp benchmarks.jar io.kse.bench.report.Report BENCHMARKS_DIR "MACHINE" "JVM"
 * </pre>
 */
public final class Report {
  private Report() {}

  public static void main(String[] args) throws IOException {
    if (args.length != 3) {
      System.err.println("usage: Report BENCHMARKS_DIR MACHINE JVM");
      System.exit(2);
    }
    Path benchmarks = Path.of(args[0]);
    Raw raw = new Raw(benchmarks.resolve("raw"));
    String now =
        ZonedDateTime.now(ZoneOffset.UTC)
            .format(DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm'Z'"));
    Files.writeString(benchmarks.resolve("results.json"), ResultsJson.of(raw, now, args[1]));
    Files.writeString(
        benchmarks.resolve("RESULTS.md"),
        new ResultsMarkdown(raw, args[1], args[2], benchmarks).render());
  }
}
