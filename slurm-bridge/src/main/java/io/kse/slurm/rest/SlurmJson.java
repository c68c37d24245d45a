package io.kse.slurm.rest;

import com.fasterxml.jackson.databind.JsonNode;
import io.kse.slurm.HostList;
import io.kse.slurm.JobState;
import io.kse.slurm.SlurmJob;
import io.kse.slurm.SlurmNode;
import io.kse.slurm.SlurmPartition;
import io.kse.slurm.SlurmQos;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;

/**
 * Reads jobs and nodes from any supported slurmrestd version. The versions differ in shape, not in
 * meaning, so one tolerant reader serves all: numbers are plain or {@code {set, number}}, states a
 * string or a list of base state plus flags, features a comma list or an array.
 */
final class SlurmJson {
  private SlurmJson() {}

  /** Every field {@link #job} reads, in any version: a job listing keeps only these. */
  static final java.util.Set<String> JOB_FIELDS =
      java.util.Set.of(
          "job_id",
          "name",
          "comment",
          "job_state",
          "state_reason",
          "partition",
          "qos",
          "nodes",
          "node_count",
          "submit_time",
          "start_time",
          "end_time",
          "preempt_time",
          "restart_cnt",
          "tres_per_node",
          "features",
          "priority",
          "gres_detail",
          "user_name",
          "time_limit");

  /**
   * A job's base state from {@code job_state} (job listings), or {@code state} ({@code jobs/state},
   * seen live on 26.05: {@code {"job_id":"1","state":["PENDING"]}}): a string, or a list of the
   * state and its flags.
   */
  static JobState state(JsonNode j) {
    return JobState.reported(strings(j.has("job_state") ? j.path("job_state") : j.path("state")));
  }

  static SlurmJob job(JsonNode j) {
    JobState state = state(j);
    Instant submit = time(j.path("submit_time")).orElse(Instant.EPOCH);
    Optional<Instant> start = time(j.path("start_time"));
    Optional<Instant> end = time(j.path("end_time"));
    Optional<Instant> preempt = time(j.path("preempt_time"));
    Instant last = submit;
    for (Optional<Instant> t : List.of(start, end, preempt)) {
      if (t.isPresent() && t.get().isAfter(last) && !t.get().isAfter(Instant.now())) {
        last = t.get();
      }
    }
    // a pending job carries its *expected* start/end times: only report them once they happened
    boolean started = state != JobState.PENDING;
    return new SlurmJob(
        j.path("job_id").asLong(),
        j.path("name").asText(""),
        j.path("comment").asText(""),
        state,
        j.path("state_reason").asText(""),
        j.path("partition").asText(""),
        j.path("qos").asText(""),
        started ? HostList.expand(j.path("nodes").asText("")) : List.of(),
        (int) number(j.path("node_count")).orElse(0),
        submit,
        started ? start : Optional.empty(),
        // a job ending on its nodes (22.05: COMPLETING) has its end time already
        state.isFinal() || state == JobState.COMPLETING ? end : Optional.empty(),
        j.path("restart_cnt").asInt(0),
        j.path("tres_per_node").asText(""),
        j.path("features").isArray()
            ? String.join(",", strings(j.path("features")))
            : j.path("features").asText(""),
        number(j.path("priority")).orElse(0),
        last,
        // set while a preempted job runs on within its grace time, and while it ends on its nodes
        state == JobState.RUNNING || state == JobState.COMPLETING ? preempt : Optional.empty(),
        started && j.path("gres_detail").isArray() ? strings(j.path("gres_detail")) : List.of(),
        j.path("user_name").asText(""),
        timeLimit(j.path("time_limit")));
  }

  /**
   * The fields {@link #node} reads: a node of v0.0.45 is some 3 KB of JSON, most of it not these.
   */
  static final java.util.Set<String> NODE_FIELDS =
      java.util.Set.of(
          "name",
          "state",
          "state_flags",
          "reason",
          "active_features",
          "features",
          "gres",
          "gres_used",
          "cpus",
          "alloc_cpus",
          "real_memory",
          "partitions");

  static SlurmNode node(JsonNode n) {
    List<String> states = strings(n.path("state"));
    String base = states.isEmpty() ? "unknown" : states.get(0).toLowerCase(Locale.ROOT);
    Set<String> flags = new LinkedHashSet<>();
    states.stream().skip(1).map(s -> s.toUpperCase(Locale.ROOT)).forEach(flags::add);
    strings(n.path("state_flags")).stream()
        .map(s -> s.toUpperCase(Locale.ROOT))
        .forEach(flags::add);
    JsonNode features = n.has("active_features") ? n.get("active_features") : n.path("features");
    return new SlurmNode(
        n.path("name").asText(),
        base,
        flags,
        n.path("reason").asText(""),
        new LinkedHashSet<>(strings(features)),
        n.path("gres").asText(""),
        n.path("gres_used").asText(""),
        n.path("cpus").asInt(0),
        n.path("alloc_cpus").asInt(0),
        number(n.path("real_memory")).orElse(0),
        strings(n.path("partitions")));
  }

  static SlurmPartition partition(JsonNode p) {
    boolean legacy = p.has("priority_tier");
    int tier = legacy ? p.path("priority_tier").asInt() : p.path("priority").path("tier").asInt();
    // slurmrestd says "disabled" for what slurm.conf calls PreemptMode=OFF
    Optional<String> mode =
        legacy
            ? Optional.of(
                String.join(",", strings(p.path("preemption_mode")))
                    .toUpperCase(Locale.ROOT)
                    .replace("DISABLED", "OFF"))
            : Optional.empty();
    long grace =
        legacy ? p.path("preemption_grace_time").asLong(0) : p.path("grace_time").asLong(0);
    return new SlurmPartition(
        p.path("name").asText(), tier, mode, java.time.Duration.ofSeconds(grace));
  }

  static SlurmQos qos(JsonNode q) {
    JsonNode preempt = q.path("preempt");
    Set<String> modes = new LinkedHashSet<>();
    strings(preempt.path("mode")).forEach(m -> modes.add(m.toUpperCase(Locale.ROOT)));
    OptionalLong exempt = number(preempt.path("exempt_time"));
    return new SlurmQos(
        q.path("name").asText(),
        number(q.path("priority")).orElse(0),
        new LinkedHashSet<>(strings(preempt.path("list"))),
        modes,
        java.time.Duration.ofSeconds(q.path("limits").path("grace_time").asLong(0)),
        exempt.isPresent()
            ? Optional.of(java.time.Duration.ofSeconds(exempt.getAsLong()))
            : Optional.empty());
  }

  /** A number that may be plain, null, or {@code {set, infinite, number}}. */
  static OptionalLong number(JsonNode n) {
    if (n == null || n.isMissingNode() || n.isNull()) {
      return OptionalLong.empty();
    }
    if (n.isObject()) {
      if (!n.path("set").asBoolean(false) || n.path("infinite").asBoolean(false)) {
        return OptionalLong.empty();
      }
      return OptionalLong.of(n.path("number").asLong());
    }
    return n.canConvertToLong() || n.isTextual() && n.asText().matches("-?\\d+")
        ? OptionalLong.of(n.asLong())
        : OptionalLong.empty();
  }

  /**
   * A time limit in minutes ({@code time_limit}: a number on v0.0.38, {set, infinite, number}
   * after); empty when unlimited (INFINITE, NO_VAL) or unset.
   */
  static Optional<java.time.Duration> timeLimit(JsonNode n) {
    OptionalLong minutes = number(n);
    return minutes.isPresent() && minutes.getAsLong() > 0 && minutes.getAsLong() < 0xfffffffeL
        ? Optional.of(java.time.Duration.ofMinutes(minutes.getAsLong()))
        : Optional.empty();
  }

  /** Epoch seconds as an instant; 0 or unset means "never". */
  static Optional<Instant> time(JsonNode n) {
    OptionalLong v = number(n);
    return v.isPresent() && v.getAsLong() > 0
        ? Optional.of(Instant.ofEpochSecond(v.getAsLong()))
        : Optional.empty();
  }

  /** A string list from an array, or from a comma-separated string. */
  static List<String> strings(JsonNode n) {
    List<String> out = new ArrayList<>();
    if (n == null || n.isMissingNode() || n.isNull()) {
      return out;
    }
    if (n.isArray()) {
      n.forEach(e -> out.add(e.asText()));
    } else {
      for (String s : n.asText("").split(",")) {
        if (!s.isBlank()) {
          out.add(s.trim());
        }
      }
    }
    return out;
  }
}
