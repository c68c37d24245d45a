package io.kse.e2e;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The preemptions Slurm itself recorded: slurmctld.log's {@code preempted JobId=V has been
 * requeued|killed to reclaim resources for JobId=P} (preempt.c, the same words from 22.05 to
 * 26.05). Slurm keeps no other record of who preempted whom without slurmdbd: a requeued job's
 * state is the same whether it was preempted or requeued by hand.
 */
final class SlurmPreemptions {
  /** Slurm took job {@code victim}'s resources for job {@code preemptor} at {@code at}. */
  record Preemption(long victim, long preemptor, Instant at) {}

  private static final Pattern LINE =
      Pattern.compile(
          "^\\[([0-9T:.-]+)\\] preempted JobId=([0-9]+) has been (?:requeued|killed) to reclaim"
              + " resources for JobId=([0-9]+)");

  private SlurmPreemptions() {}

  /** The log's length now: where to read from later. */
  static long end(Path log) {
    try {
      return Files.exists(log) ? Files.size(log) : 0;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The preemptions logged since byte {@code from} of slurmctld's log. */
  static List<Preemption> since(Path log, long from) {
    if (!Files.exists(log)) {
      return List.of();
    }
    try (RandomAccessFile f = new RandomAccessFile(log.toFile(), "r")) {
      f.seek(Math.min(from, f.length()));
      byte[] rest = new byte[(int) (f.length() - f.getFilePointer())];
      f.readFully(rest);
      return parse(new String(rest, StandardCharsets.UTF_8), ZoneId.systemDefault());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Every preemption line of {@code text}; slurmctld stamps its lines in local time. */
  static List<Preemption> parse(String text, ZoneId zone) {
    List<Preemption> out = new ArrayList<>();
    for (String line : text.split("\n")) {
      Matcher m = LINE.matcher(line);
      if (m.find()) {
        out.add(
            new Preemption(
                Long.parseLong(m.group(2)),
                Long.parseLong(m.group(3)),
                LocalDateTime.parse(m.group(1)).atZone(zone).toInstant()));
      }
    }
    return out;
  }
}
