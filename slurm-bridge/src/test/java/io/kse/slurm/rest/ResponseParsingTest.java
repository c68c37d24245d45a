package io.kse.slurm.rest;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.kse.slurm.ApiVersion;
import io.kse.slurm.JobState;
import io.kse.slurm.PlaceholderTag;
import io.kse.slurm.SlurmJob;
import io.kse.slurm.SlurmNode;
import io.kse.slurm.testing.Fixtures;
import io.kse.slurm.testing.OpenApiSchema;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Parsing of responses: v0.0.38 from answers recorded on the local Slurm 22.05, v0.0.41–44 from
 * fixtures that are first validated against each version's OpenAPI document.
 */
class ResponseParsingTest {

  @Test
  void parsesARecordedRunningJobFromSlurm2205() {
    JsonNode body = Fixtures.json("v0.0.38", "jobs-running.json");
    SlurmJob j = SlurmJson.job(body.path("jobs").get(0));
    assertThat(j.id()).isEqualTo(1);
    assertThat(j.state()).isEqualTo(JobState.RUNNING);
    assertThat(j.nodes()).containsExactly("gpu-node-0");
    assertThat(j.isAllocated()).isTrue();
    assertThat(j.partition()).isEqualTo("inference");
    assertThat(j.tresPerNode()).isEqualTo("gres:gpu:h100:4");
    assertThat(j.features()).isEqualTo("[nvl-0|nvl-1]");
    assertThat(j.startTime()).contains(Instant.ofEpochSecond(1795326582));
    assertThat(j.endTime()).as("a running job's end_time is only its limit").isEmpty();
    assertThat(j.placeholder()).contains(new PlaceholderTag("ns", "p", "123"));
    assertThat(j.gpuIndicesOn("gpu-node-0")).contains(List.of(0, 1, 2, 3));
    assertThat(j.gpuIndicesOn("gpu-node-1")).isEmpty();
    assertThat(j.preempting()).isFalse();
  }

  /**
   * Slurm 22.05 names a flag instead of the base state (job_state_string: flags first); read as
   * unknown, a running placeholder whose prolog runs would look as if it had lost its node, and its
   * bound pod would be evicted.
   */
  @ParameterizedTest(name = "{0}")
  @org.junit.jupiter.params.provider.CsvSource({
    "CONFIGURING, RUNNING",
    "SIGNALING, RUNNING",
    "STOPPED, RUNNING",
    "RESIZING, RUNNING",
    "REQUEUED, PENDING",
    "REQUEUE_HOLD, PENDING",
    "SPECIAL_EXIT, PENDING",
    "STAGE_OUT, COMPLETING",
    "REVOKED, CANCELLED",
    "NO_SUCH_FLAG, UNKNOWN"
  })
  void aFlagNamedAloneStandsForTheBaseStateItImplies(String word, JobState implied) {
    var json = com.fasterxml.jackson.databind.node.JsonNodeFactory.instance;
    assertThat(SlurmJson.state(json.objectNode().put("job_state", word))).isEqualTo(implied);
    var listed = json.objectNode();
    listed.putArray("job_state").add("FAILED").add(word);
    assertThat(SlurmJson.state(listed)).as("a base state listed wins").isEqualTo(JobState.FAILED);
  }

  @Test
  void parsesARecordedHeldJobAsPendingWithoutNodes() {
    SlurmJob j = SlurmJson.job(Fixtures.json("v0.0.38", "job-held.json").path("jobs").get(0));
    assertThat(j.state()).isEqualTo(JobState.PENDING);
    assertThat(j.stateReason()).isEqualTo("JobHeldUser");
    assertThat(j.nodes()).isEmpty();
    assertThat(j.startTime()).isEmpty();
  }

  @Test
  void parsesRecordedNodesFromSlurm2205() {
    List<SlurmNode> nodes = nodes(Fixtures.json("v0.0.38", "nodes.json"));
    assertThat(nodes).hasSize(8);
    SlurmNode n0 = nodes.get(0);
    assertThat(n0.name()).isEqualTo("gpu-node-0");
    assertThat(n0.features()).containsExactly("nvl-0");
    assertThat(n0.gres()).isEqualTo("gpu:h100:8");
    assertThat(n0.cpus()).isEqualTo(16);
    assertThat(n0.realMemoryMb()).isEqualTo(128000);
    assertThat(n0.partitions()).containsExactly("training", "inference");
    assertThat(nodes.get(7).features()).containsExactly("nvl-1");
  }

  @ParameterizedTest(name = "{0}")
  @EnumSource(value = ApiVersion.class, names = "V0038", mode = EnumSource.Mode.EXCLUDE)
  void fixturesConformToTheSchema(ApiVersion v) {
    OpenApiSchema s = OpenApiSchema.forVersion(v.id());
    String p = v.slurmPath();
    assertThat(s.validateResponse("GET", p + "/jobs/", Fixtures.json(v.id(), "jobs.json")))
        .isEmpty();
    assertThat(
            s.validateResponse(
                "GET", p + "/job/{job_id}", Fixtures.json(v.id(), "job-running.json")))
        .isEmpty();
    assertThat(
            s.validateResponse(
                "GET", p + "/job/{job_id}", Fixtures.json(v.id(), "job-missing.json")))
        .isEmpty();
    assertThat(s.validateResponse("GET", p + "/nodes/", Fixtures.json(v.id(), "nodes.json")))
        .isEmpty();
    assertThat(s.validateResponse("POST", p + "/job/submit", Fixtures.json(v.id(), "submit.json")))
        .isEmpty();
    assertThat(s.validateResponse("GET", p + "/ping/", Fixtures.json(v.id(), "ping.json")))
        .isEmpty();
  }

  @ParameterizedTest(name = "{0}")
  @EnumSource(
      value = ApiVersion.class,
      names = {"V0038", "V0045"},
      mode = EnumSource.Mode.EXCLUDE)
  void parsesJobsOfNewerVersions(ApiVersion v) {
    JsonNode jobs = Fixtures.json(v.id(), "jobs.json").path("jobs");
    SlurmJob running = SlurmJson.job(jobs.get(0));
    assertThat(running.state()).isEqualTo(JobState.RUNNING);
    assertThat(running.nodes()).containsExactly("gpu-node-4", "gpu-node-5");
    assertThat(running.nodeCount()).isEqualTo(2);
    assertThat(running.priority()).isEqualTo(10000);
    assertThat(running.placeholder().map(PlaceholderTag::uid))
        .contains("6f1c2d3e-0000-4000-8000-000000000001");
    assertThat(running.gpuIndicesOn("gpu-node-4")).contains(List.of(0, 1, 2, 3));
    assertThat(running.gpuIndicesOn("gpu-node-5")).contains(List.of(2, 5, 6, 7));
    assertThat(running.preempting()).as("preempt_time 0 is unset").isFalse();

    SlurmJob requeued = SlurmJson.job(jobs.get(1));
    assertThat(requeued.state()).isEqualTo(JobState.PENDING);
    assertThat(requeued.restartCount()).isEqualTo(1);
    assertThat(requeued.endTime()).isEmpty();
    assertThat(requeued.startTime()).as("a pending job's start_time is an estimate").isEmpty();
    assertThat(requeued.placeholder()).isEmpty();
  }

  @ParameterizedTest(name = "{0}")
  @EnumSource(
      value = ApiVersion.class,
      names = {"V0038", "V0045"},
      mode = EnumSource.Mode.EXCLUDE)
  void parsesNodeStateListsOfNewerVersions(ApiVersion v) {
    List<SlurmNode> nodes = nodes(Fixtures.json(v.id(), "nodes.json"));
    assertThat(nodes.get(0).state()).isEqualTo("idle");
    assertThat(nodes.get(0).flags()).containsExactly("DRAIN");
    assertThat(nodes.get(0).isDraining()).isTrue();
    assertThat(nodes.get(0).reason()).isEqualTo("kse: cordoned in Kubernetes");
    assertThat(nodes.get(1).state()).isEqualTo("mixed");
    assertThat(nodes.get(1).isUnavailable()).isFalse();
    assertThat(nodes.get(1).features()).containsExactly("nvl-1");
  }

  @Test
  void parsesRecordedPartitionsAndQosFromSlurm2205() {
    List<io.kse.slurm.SlurmPartition> parts = new java.util.ArrayList<>();
    Fixtures.json("v0.0.38", "partitions.json")
        .path("partitions")
        .forEach(p -> parts.add(SlurmJson.partition(p)));
    assertThat(parts)
        .containsExactly(
            new io.kse.slurm.SlurmPartition(
                "training", 1, Optional.of("REQUEUE"), java.time.Duration.ZERO),
            new io.kse.slurm.SlurmPartition(
                "inference", 10, Optional.of("OFF"), java.time.Duration.ZERO));
    List<io.kse.slurm.SlurmQos> qos = new java.util.ArrayList<>();
    Fixtures.json("v0.0.38", "qos.json").path("QOS").forEach(q -> qos.add(SlurmJson.qos(q)));
    var inference =
        qos.stream().filter(q -> q.name().equals("inference")).findFirst().orElseThrow();
    assertThat(inference.priority()).isEqualTo(1000);
    assertThat(inference.preempts()).containsExactlyInAnyOrder("training", "training-protected");
    assertThat(inference.preemptModes()).containsExactly("REQUEUE");
    var training = qos.stream().filter(q -> q.name().equals("training")).findFirst().orElseThrow();
    assertThat(training.graceTime()).isEqualTo(java.time.Duration.ofSeconds(2));
    var protectedQos =
        qos.stream().filter(q -> q.name().equals("training-protected")).findFirst().orElseThrow();
    assertThat(protectedQos.preemptExemptTime()).contains(java.time.Duration.ofMinutes(5));
  }

  /** v0.0.45: every answer recorded live from Slurm 26.05.5 (src/test/resources/slurm/v0.0.45). */
  @Test
  void parsesRecordedAnswersOfSlurm2605() {
    SlurmJob j = SlurmJson.job(Fixtures.json("v0.0.45", "jobs.json").path("jobs").get(0));
    assertThat(j.state()).isEqualTo(JobState.RUNNING);
    assertThat(j.nodes()).containsExactly("gpu-node-0");
    assertThat(j.isAllocated()).isTrue();
    assertThat(j.partition()).isEqualTo("inference");
    assertThat(j.tresPerNode()).isEqualTo("gres/gpu:h100:4");
    assertThat(j.gpusPerNode()).isEqualTo(4);
    assertThat(j.gpuIndicesOn("gpu-node-0")).contains(List.of(0, 1, 2, 3));
    assertThat(j.placeholder()).contains(new PlaceholderTag("ns", "p", "u-45"));
    assertThat(j.user()).as("who submitted it: what makes a placeholder ours").isEqualTo("kse");
    assertThat(j.startTime()).isPresent();
    assertThat(j.endTime()).isEmpty();
    List<SlurmNode> nodes = nodes(Fixtures.json("v0.0.45", "nodes.json"));
    assertThat(nodes).hasSize(8);
    assertThat(nodes.get(0).name()).isEqualTo("gpu-node-0");
    assertThat(nodes.get(0).state()).isEqualTo("mixed");
    assertThat(nodes.get(0).features()).containsExactly("nvl-0");
    assertThat(nodes.get(0).gres()).isEqualTo("gpu:h100:8");
    assertThat(nodes.get(1).state()).isEqualTo("idle");
    var parts = new java.util.ArrayList<io.kse.slurm.SlurmPartition>();
    Fixtures.json("v0.0.45", "partitions.json")
        .path("partitions")
        .forEach(p -> parts.add(SlurmJson.partition(p)));
    assertThat(parts)
        .extracting(io.kse.slurm.SlurmPartition::name)
        .contains("training", "inference");
  }

  @ParameterizedTest(name = "{0}")
  @EnumSource(
      value = ApiVersion.class,
      names = {"V0038", "V0045"},
      mode = EnumSource.Mode.EXCLUDE)
  void parsesPartitionsAndQosOfNewerVersions(ApiVersion v) {
    var training =
        SlurmJson.partition(Fixtures.json(v.id(), "partitions.json").path("partitions").get(1));
    assertThat(training)
        .isEqualTo(
            new io.kse.slurm.SlurmPartition(
                "training", 1, Optional.empty(), java.time.Duration.ofMinutes(2)));
    var q = SlurmJson.qos(Fixtures.json(v.id(), "qos.json").path("qos").get(0));
    assertThat(q.priority()).isEqualTo(10);
    assertThat(q.preemptExemptTime()).contains(java.time.Duration.ofMinutes(15));
    var inf = SlurmJson.qos(Fixtures.json(v.id(), "qos.json").path("qos").get(1));
    assertThat(inf.preempts()).containsExactly("training");
    assertThat(inf.preemptExemptTime()).isEmpty();
  }

  /** A job chosen for preemption runs on within its grace time with preempt_time set. */
  @Test
  void aRunningJobWithAPreemptTimeIsBeingPreempted() {
    for (String v : List.of("v0.0.38", "v0.0.45")) {
      var job =
          (com.fasterxml.jackson.databind.node.ObjectNode)
              Fixtures.json(v, "job-running.json").path("jobs").get(0);
      Instant at = Instant.ofEpochSecond(1795326600);
      job.set(
          "preempt_time",
          v.equals("v0.0.38")
              ? job.numberNode(at.getEpochSecond())
              : new com.fasterxml.jackson.databind.ObjectMapper()
                  .valueToTree(
                      java.util.Map.of(
                          "set", true, "infinite", false, "number", at.getEpochSecond())));
      SlurmJob preempted = SlurmJson.job(job);
      assertThat(preempted.preempting()).as(v).isTrue();
      assertThat(preempted.preemptTime()).as(v).contains(at);
      job.set(
          "job_state",
          v.equals("v0.0.38") ? job.textNode("PREEMPTED") : job.arrayNode().add("PREEMPTED"));
      assertThat(SlurmJson.job(job).preempting()).as(v + " once it ended").isFalse();
    }
  }

  @Test
  void readsPlainAndWrappedNumbers() {
    var m = new com.fasterxml.jackson.databind.ObjectMapper();
    assertThat(SlurmJson.number(m.valueToTree(5))).hasValue(5);
    assertThat(SlurmJson.number(m.valueToTree("42"))).hasValue(42);
    assertThat(SlurmJson.number(m.nullNode())).isEmpty();
    assertThat(
            SlurmJson.number(
                m.valueToTree(java.util.Map.of("set", true, "infinite", false, "number", 9))))
        .hasValue(9);
    assertThat(
            SlurmJson.number(
                m.valueToTree(java.util.Map.of("set", false, "infinite", false, "number", 9))))
        .isEmpty();
    assertThat(
            SlurmJson.number(
                m.valueToTree(java.util.Map.of("set", true, "infinite", true, "number", 0))))
        .isEmpty();
    assertThat(SlurmJson.time(m.valueToTree(0))).isEqualTo(Optional.empty());
  }

  private static List<SlurmNode> nodes(JsonNode body) {
    List<SlurmNode> out = new java.util.ArrayList<>();
    body.path("nodes").forEach(n -> out.add(SlurmJson.node(n)));
    return out;
  }

  /**
   * Slurm 22.05 says COMPLETING alone while a job ends on its nodes (and, with the hold, until its
   * pod is gone): the pod is told the end all the same, from what the job says besides.
   */
  @ParameterizedTest(name = "{0}")
  @CsvSource({
    "'{\"job_state\":\"COMPLETING\",\"start_time\":1000,\"end_time\":1090,\"time_limit\":1}',TIMEOUT",
    "'{\"job_state\":\"COMPLETING\",\"start_time\":1000,\"end_time\":1030,\"time_limit\":1}',CANCELLED",
    "'{\"job_state\":\"COMPLETING\",\"start_time\":1000,\"end_time\":1030,\"time_limit\":4294967295}',CANCELLED",
    "'{\"job_state\":\"COMPLETING\",\"start_time\":1000,\"end_time\":1030,\"state_reason\":\"NodeDown\"}',NODE_FAIL",
    "'{\"job_state\":\"COMPLETING\",\"start_time\":1000,\"end_time\":1030,\"preempt_time\":1010}',PREEMPTED",
    "'{\"job_state\":\"COMPLETING\",\"start_time\":1000,\"end_time\":1030,\"restart_cnt\":1}',PENDING",
    "'{\"job_state\":[\"TIMEOUT\",\"COMPLETING\"],\"start_time\":1000,\"end_time\":1030,\"time_limit\":{\"set\":true,\"infinite\":false,\"number\":1}}',TIMEOUT",
    "'{\"job_state\":\"CANCELLED\",\"start_time\":1000,\"end_time\":1090,\"time_limit\":1}',CANCELLED"
  })
  void aJobEndingOn2205SaysHowItEnded(String json, JobState ended) throws Exception {
    SlurmJob j = SlurmJson.job(new com.fasterxml.jackson.databind.ObjectMapper().readTree(json));
    assertThat(j.endedAs()).isEqualTo(ended);
  }
}
