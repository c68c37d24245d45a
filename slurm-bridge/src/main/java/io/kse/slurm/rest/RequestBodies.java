package io.kse.slurm.rest;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kse.slurm.ApiVersion;
import io.kse.slurm.JobSubmission;
import io.kse.slurm.JobUpdate;
import io.kse.slurm.SlurmRejectedException;
import java.util.Map;
import java.util.TreeMap;

/**
 * Request bodies for each slurmrestd version. v0.0.38 takes plain numbers, an environment object
 * and {@code gres}; v0.0.41+ wrap numbers in {@code {set, number}}, take the environment as a list
 * of {@code K=V} and GRES as {@code tres_per_node}; only v0.0.41 has {@code exclusive}, later
 * versions express it as {@code shared: ["none"]}.
 */
final class RequestBodies {
  private static final JsonNodeFactory F = JsonNodeFactory.instance;

  private final ApiVersion version;

  RequestBodies(ApiVersion version) {
    this.version = version;
  }

  private boolean legacy() {
    return version == ApiVersion.V0038;
  }

  ObjectNode submit(JobSubmission s) {
    if (!s.excludedNodes().isEmpty() && !version.supportsExcludedNodes()) {
      throw new SlurmRejectedException(
          "excluded nodes "
              + s.excludedNodesSorted()
              + " cannot be sent to slurmrestd "
              + version.id()
              + ": Slurm 22.05 disables the excluded_nodes key; drop the exclusion or use v0.0.41+");
    }
    ObjectNode job = F.objectNode();
    job.put("name", s.tag().jobName());
    job.put("comment", s.tag().toComment());
    s.partition().ifPresent(v -> job.put("partition", v));
    s.qos().ifPresent(v -> job.put("qos", v));
    s.account().ifPresent(v -> job.put("account", v));
    // one task per node holding all the pod's CPUs, so "cpus per node" means what it says
    if (legacy()) {
      job.putArray("nodes").add(s.nodes()).add(s.nodes()); // [min, max]
    } else {
      job.put("nodes", Integer.toString(s.nodes()));
    }
    job.put("tasks", s.nodes());
    job.put("tasks_per_node", 1);
    job.put("cpus_per_task", s.cpusPerNode());
    if (s.memoryPerNodeMb() > 0) {
      number(job, "memory_per_node", s.memoryPerNodeMb());
    }
    s.gresPerNode()
        .ifPresent(g -> job.put(legacy() ? "gres" : "tres_per_node", legacy() ? g : "gres/" + g));
    s.timeLimitMinutes().ifPresent(m -> number(job, "time_limit", m));
    s.constraints().ifPresent(v -> job.put("constraints", v));
    if (s.maxSwitches().isPresent() || s.segmentSize().isPresent()) {
      if (legacy()) {
        throw new SlurmRejectedException(
            "switch and segment requests need slurmrestd v0.0.41+ (Slurm 24.05); this server"
                + " speaks "
                + version.id()
                + ": ask for one NVLink domain (kse.io/topology: nvlink-domain) instead");
      }
      s.maxSwitches().ifPresent(n -> number(job, "required_switches", n));
      s.switchWaitSeconds().ifPresent(w -> job.put("wait_for_switch", w));
      s.segmentSize().ifPresent(n -> number(job, "segment_size", n));
    }
    if (!s.excludedNodes().isEmpty()) {
      ArrayNode ex = job.putArray("excluded_nodes");
      s.excludedNodesSorted().forEach(ex::add);
    }
    if (s.exclusive()) {
      exclusive(job);
    }
    s.reservation().ifPresent(v -> job.put("reservation", v));
    s.licenses().ifPresent(v -> job.put("licenses", v));
    s.priority().ifPresent(p -> priority(job, p));
    s.nice().ifPresent(n -> job.put("nice", n));
    if (s.hold()) {
      job.put("hold", true);
    }
    job.put("current_working_directory", s.workingDirectory());
    job.put("standard_output", "/dev/null");
    environment(job, s.environment());

    ObjectNode body = F.objectNode();
    if (s.shape() == JobSubmission.Shape.EXTERNAL) {
      if (!version.supportsExternalJobs()) {
        throw new SlurmRejectedException(
            "external placeholder jobs need slurmrestd v0.0.44"
                + " (Slurm 25.11); this server speaks "
                + version.id()
                + ": use the batch shape");
      }
      job.remove("standard_output"); // nothing runs, so nothing writes
      job.putArray("flags").add("EXTERNAL_JOB");
    } else if (legacy()) {
      body.put("script", JobSubmission.PLACEHOLDER_SCRIPT);
    } else {
      job.put("script", JobSubmission.PLACEHOLDER_SCRIPT);
    }
    body.set("job", job);
    return body;
  }

  ObjectNode update(JobUpdate u) {
    ObjectNode job = F.objectNode();
    u.hold().ifPresent(h -> job.put("hold", h));
    u.nice().ifPresent(n -> job.put("nice", n));
    u.priority().ifPresent(p -> priority(job, p));
    u.timeLimitMinutes().ifPresent(m -> number(job, "time_limit", m));
    u.comment().ifPresent(c -> job.put("comment", c));
    u.qos().ifPresent(q -> job.put("qos", q));
    u.partition().ifPresent(p -> job.put("partition", p));
    return job;
  }

  /** Body of a node update: {@code DRAIN} with a reason, or {@code RESUME}. */
  ObjectNode nodeState(String node, String state, String reason) {
    if (!version.supportsNodeUpdates()) {
      throw new SlurmRejectedException(
          "cannot set node "
              + node
              + " to "
              + state
              + " through slurmrestd "
              + version.id()
              + ": Slurm 22.05 has no node update endpoint (use v0.0.41+ or scontrol)");
    }
    ObjectNode body = F.objectNode();
    body.putArray("state").add(state);
    if (reason != null) {
      body.put("reason", reason);
    }
    return body;
  }

  private void number(ObjectNode job, String field, long value) {
    if (legacy()) {
      job.put(field, value);
    } else {
      ObjectNode n = job.putObject(field);
      n.put("set", true);
      n.put("infinite", false);
      n.put("number", value);
    }
  }

  private void priority(ObjectNode job, long value) {
    if (legacy()) {
      job.put("priority", Long.toString(value)); // 22.05 parses priority as a string
    } else {
      number(job, "priority", value);
    }
  }

  private void exclusive(ObjectNode job) {
    switch (version) {
      case V0038 -> job.put("exclusive", "exclusive"); // the spec's "true" is refused by 22.05
      case V0041 -> job.putArray("exclusive").add("true");
      default -> job.putArray("shared").add("none");
    }
  }

  private void environment(ObjectNode job, Map<String, String> env) {
    Map<String, String> sorted = new TreeMap<>(env);
    if (legacy()) {
      ObjectNode e = job.putObject("environment");
      sorted.forEach(e::put);
    } else {
      ArrayNode e = job.putArray("environment");
      sorted.forEach((k, v) -> e.add(k + "=" + v));
    }
  }
}
