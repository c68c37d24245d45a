package io.kse.slurm.rest;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kse.slurm.SlurmJob;
import java.util.ArrayList;
import java.util.List;

/**
 * Jobs from a saved slurmrestd {@code GET /jobs} answer ({@code curl …/slurm/v0.0.38/jobs >
 * jobs.json}), read by the same reader as live answers, for any supported version: the policy CLI's
 * {@code explain --jobs} sees a job exactly as the extender does.
 */
public final class SavedJobs {
  private SavedJobs() {}

  public static List<SlurmJob> parse(String json) {
    JsonNode root;
    try {
      root = new ObjectMapper().readTree(json);
    } catch (Exception e) {
      throw new IllegalArgumentException("not JSON: " + e.getMessage(), e);
    }
    if (root == null || !root.path("jobs").isArray()) {
      throw new IllegalArgumentException("expected a slurmrestd jobs answer with a \"jobs\" list");
    }
    List<SlurmJob> out = new ArrayList<>();
    for (JsonNode j : root.get("jobs")) {
      out.add(SlurmJson.job(j));
    }
    return out;
  }
}
