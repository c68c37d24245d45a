package io.kse.slurm;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The Slurm release slurmrestd speaks for, read from any answer's {@code meta}: {@code
 * meta.Slurm.release} (v0.0.38: {@code "22.05.8"}, version numbers as ints) or {@code
 * meta.slurm.release} (v0.0.40 and later: {@code "26.05.5"}, numbers as strings, the minor {@code
 * "05"}). What the REST version alone cannot tell: fixes that came in a maintenance release.
 */
public record SlurmRelease(int major, int minor, int micro) implements Comparable<SlurmRelease> {
  private static final Pattern RELEASE = Pattern.compile("^(\\d+)\\.(\\d+)\\.(\\d+)");

  /**
   * The first release in which a GPU some job holds shards of is never given whole to another while
   * one of those shards remains: before it, a shard job's end cleared the GPU's shard mark though
   * other jobs still held shards there (SchedMD bug 19110, "Fix bad deallocation of shared gres",
   * in 23.11.5). Seen on Debian's 22.05.8: two jobs with a shard each on GPU 0, one ends, and an
   * 8-GPU job is given GPU 0 too; 24.11.5 and 26.05.5 keep it pending.
   */
  public static final SlurmRelease SHARDS_KEPT_APART = new SlurmRelease(23, 11, 5);

  /** From an answer's {@code meta}, when it says. */
  public static Optional<SlurmRelease> fromMeta(JsonNode meta) {
    if (meta == null) {
      return Optional.empty();
    }
    for (String key : new String[] {"slurm", "Slurm"}) {
      JsonNode s = meta.path(key);
      Matcher m = RELEASE.matcher(s.path("release").asText(""));
      if (m.find()) {
        return Optional.of(
            new SlurmRelease(
                Integer.parseInt(m.group(1)),
                Integer.parseInt(m.group(2)),
                Integer.parseInt(m.group(3))));
      }
      JsonNode v = s.path("version");
      if (v.has("major") && v.has("minor") && v.has("micro")) {
        try {
          return Optional.of(
              new SlurmRelease(
                  Integer.parseInt(v.path("major").asText()),
                  Integer.parseInt(v.path("minor").asText()),
                  Integer.parseInt(v.path("micro").asText())));
        } catch (NumberFormatException e) {
          return Optional.empty();
        }
      }
    }
    return Optional.empty();
  }

  /** Whether Slurm keeps whole GPUs and shards of a GPU apart ({@link #SHARDS_KEPT_APART}). */
  public boolean keepsShardsApart() {
    return compareTo(SHARDS_KEPT_APART) >= 0;
  }

  @Override
  public int compareTo(SlurmRelease o) {
    int c = Integer.compare(major, o.major);
    if (c == 0) {
      c = Integer.compare(minor, o.minor);
    }
    return c != 0 ? c : Integer.compare(micro, o.micro);
  }

  @Override
  public String toString() {
    return String.format("%d.%02d.%d", major, minor, micro);
  }
}
