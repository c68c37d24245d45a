package io.kse.policy.load;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kse.policy.RunningJob;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Running jobs from a saved slurmrestd {@code GET /jobs} answer (any version from v0.0.38), for
 * {@code explain}: {@code curl …/slurm/v0.0.38/jobs > jobs.json}.
 */
public final class JobSnapshot {
  // the same reading as the bridge's SlurmJob.gpusPerNode (GpuCountAgreementTest keeps them in
  // step)
  private static final Pattern GPUS = Pattern.compile("gpu(?::[^:,/]+)?:(\\d+)");

  private JobSnapshot() {}

  public static List<RunningJob> parse(String json) {
    JsonNode root;
    try {
      root = new ObjectMapper().readTree(json);
    } catch (Exception e) {
      throw new IllegalArgumentException("not JSON: " + e.getMessage(), e);
    }
    if (!root.path("jobs").isArray()) {
      throw new IllegalArgumentException("expected a slurmrestd jobs answer with a \"jobs\" list");
    }
    List<RunningJob> out = new ArrayList<>();
    for (JsonNode j : root.get("jobs")) {
      JsonNode st = j.path("job_state");
      String state = st.isArray() ? (st.isEmpty() ? "" : st.get(0).asText()) : st.asText("");
      if (!state.equals("RUNNING")) {
        continue;
      }
      int nodes = (int) number(j.path("node_count"));
      Matcher m = GPUS.matcher(j.path("tres_per_node").asText(""));
      long gpusPerNode = m.find() ? Long.parseLong(m.group(1)) : 0;
      out.add(
          new RunningJob(
              j.path("job_id").asLong(),
              j.path("name").asText(""),
              j.path("partition").asText(""),
              j.path("qos").asText(""),
              gpusPerNode * Math.max(1, nodes),
              Math.max(1, nodes),
              Instant.ofEpochSecond(number(j.path("start_time")))));
    }
    return out;
  }

  private static long number(JsonNode n) {
    return n.isObject() ? n.path("number").asLong(0) : n.asLong(0);
  }
}
