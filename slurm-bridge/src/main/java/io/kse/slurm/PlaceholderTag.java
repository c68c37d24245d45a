package io.kse.slurm;

import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Who a placeholder job stands for, written into the job's comment so that the whole mapping can be
 * rebuilt from Slurm alone after a restart: {@code kse:v1 pod=<namespace>/<name> uid=<uid>}.
 * Kubernetes names and UIDs never contain spaces, so the format needs no escaping.
 */
public record PlaceholderTag(String namespace, String name, String uid) {
  private static final String PREFIX = "kse:v1 ";
  private static final Pattern FORMAT =
      Pattern.compile("kse:v1 pod=([a-z0-9.-]+)/([a-z0-9.-]+) uid=([A-Za-z0-9-]+)");

  public PlaceholderTag {
    require("namespace", namespace);
    require("name", name);
    require("uid", uid);
  }

  public String toComment() {
    return PREFIX + "pod=" + namespace + "/" + name + " uid=" + uid;
  }

  /** A job name that is readable in squeue and unique per pod. */
  public String jobName() {
    return "kse-" + namespace + "-" + name;
  }

  /** Parses a job comment; empty for jobs that are not ours. */
  public static Optional<PlaceholderTag> fromComment(String comment) {
    if (comment == null || !comment.startsWith(PREFIX)) {
      return Optional.empty();
    }
    Matcher m = FORMAT.matcher(comment.trim());
    return m.matches()
        ? Optional.of(new PlaceholderTag(m.group(1), m.group(2), m.group(3)))
        : Optional.empty();
  }

  private static void require(String field, String value) {
    if (value == null || value.isBlank() || value.chars().anyMatch(Character::isWhitespace)) {
      throw new IllegalArgumentException(
          "placeholder " + field + " must be non-empty without spaces, got '" + value + "'");
    }
  }
}
