package io.kse.slurm;

import java.util.Arrays;
import java.util.List;

/** The slurmrestd OpenAPI versions this bridge speaks, newest first in {@link #newestFirst()}. */
public enum ApiVersion {
  V0038("v0.0.38"), // Slurm 22.05
  V0041("v0.0.41"), // 24.05
  V0042("v0.0.42"), // 24.11
  V0043("v0.0.43"), // 25.05
  V0044("v0.0.44"), // 25.11
  V0045("v0.0.45"); // 26.05

  private final String id;

  ApiVersion(String id) {
    this.id = id;
  }

  /** The version as it appears in URLs, e.g. {@code v0.0.38}. */
  public String id() {
    return id;
  }

  /** slurmrestd 22.05 disables the {@code excluded_nodes} key ("Disabled key"). */
  public boolean supportsExcludedNodes() {
    return this != V0038;
  }

  /** slurmrestd 22.05 has no node update endpoint (drain/resume need v0.0.41+). */
  public boolean supportsNodeUpdates() {
    return this != V0038;
  }

  /**
   * v0.0.40 and later take {@code flags} on node reads; v0.0.38 always adds DETAIL, whose GRES
   * usage slurmctld gathers node by node and the bridge never reads.
   */
  public boolean supportsNodeShowFlags() {
    return this != V0038;
  }

  /**
   * v0.0.41 (Slurm 23.11.5) and later answer {@code jobs/state}: only ids and states, for the ids
   * asked or every job; v0.0.38 reads job by job, and lists the table for every job.
   */
  public boolean supportsJobStates() {
    return this != V0038;
  }

  /** Slurm 25.11 (v0.0.44) and later can run "external" jobs that run no process. */
  public boolean supportsExternalJobs() {
    return compareTo(V0044) >= 0;
  }

  /** URL prefix of the slurmctld endpoints of this version, e.g. {@code /slurm/v0.0.38}. */
  public String slurmPath() {
    return "/slurm/" + id;
  }

  public static List<ApiVersion> newestFirst() {
    List<ApiVersion> all = Arrays.asList(values());
    java.util.Collections.reverse(all);
    return all;
  }

  /**
   * Parses {@code v0.0.41}, {@code 0.0.41} or {@code V0041}; the error names the accepted values.
   */
  public static ApiVersion parse(String text) {
    String t = text.trim();
    for (ApiVersion v : values()) {
      if (v.id.equalsIgnoreCase(t) || v.id.substring(1).equals(t) || v.name().equalsIgnoreCase(t)) {
        return v;
      }
    }
    throw new IllegalArgumentException(
        "unknown slurmrestd API version '" + text + "'; supported: " + Arrays.toString(ids()));
  }

  private static String[] ids() {
    return Arrays.stream(values()).map(ApiVersion::id).toArray(String[]::new);
  }
}
