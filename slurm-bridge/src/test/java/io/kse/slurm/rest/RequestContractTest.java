package io.kse.slurm.rest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kse.slurm.ApiVersion;
import io.kse.slurm.JobSubmission;
import io.kse.slurm.JobUpdate;
import io.kse.slurm.PlaceholderTag;
import io.kse.slurm.SlurmRejectedException;
import io.kse.slurm.testing.OpenApiSchema;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Every request body we send, validated against the version's own OpenAPI document. */
class RequestContractTest {
  private static final PlaceholderTag TAG =
      new PlaceholderTag("inference", "llm-0", "6f1c2d3e-0000-4000-8000-000000000001");

  /** Uses every field a submission can carry. */
  static JobSubmission everything(boolean withExclusions) {
    return everythingBuilder(withExclusions).build();
  }

  static JobSubmission.Builder everythingBuilder(boolean withExclusions) {
    return JobSubmission.builder(TAG)
        .partition("inference")
        .qos("inference")
        .account("lab")
        .nodes(2)
        .cpusPerNode(8)
        .memoryPerNodeMb(32_000)
        .gresPerNode("gpu:h100:4")
        .timeLimitMinutes(120)
        .constraints("[nvl-0|nvl-1]")
        .excludedNodes(withExclusions ? Set.of("gpu-node-3", "gpu-node-1") : Set.of())
        .exclusive(true)
        .reservation("maint")
        .licenses("fabric:1")
        .priority(5000)
        .nice(10)
        .hold(true)
        .workingDirectory("/var/tmp")
        .environment(Map.of("PATH", "/usr/bin:/bin", "KSE_POD", "inference/llm-0"));
  }

  @ParameterizedTest(name = "{0}")
  @EnumSource(value = ApiVersion.class, names = "V0038", mode = EnumSource.Mode.EXCLUDE)
  void submitBodyMatchesTheSchema(ApiVersion v) {
    JsonNode body = new RequestBodies(v).submit(everythingBuilder(true).switches(1, 300).build());
    assertThat(schema(v).validateRequest("POST", v.slurmPath() + "/job/submit", body)).isEmpty();
    assertThat(body.path("job").path("excluded_nodes").toString())
        .isEqualTo("[\"gpu-node-1\",\"gpu-node-3\"]");
    assertThat(body.path("job").path("tres_per_node").asText()).isEqualTo("gres/gpu:h100:4");
    assertThat(body.path("job").path("script").asText()).contains("sleep infinity");
  }

  @Test
  void submitBodyForV0038MatchesTheSchemaExceptTheDocumentedExclusiveValue() {
    ObjectNode body = new RequestBodies(ApiVersion.V0038).submit(everything(false));
    List<String> problems =
        schema(ApiVersion.V0038).validateRequest("POST", "/slurm/v0.0.38/job/submit", body);
    // The 22.05 document lists "true" for exclusive, but slurmrestd 22.05 answers "Invalid
    // exclusive specification" to it and accepts "exclusive" (verified live by SlurmBridgeIT).
    assertThat(problems).singleElement().asString().startsWith("$.job.exclusive: 'exclusive'");
    assertThat(body.path("job").path("gres").asText()).isEqualTo("gpu:h100:4");
    assertThat(body.path("script").asText()).contains("sleep infinity");
    assertThat(body.path("job").path("environment").path("KSE_POD").asText())
        .isEqualTo("inference/llm-0");
  }

  @ParameterizedTest(name = "{0}")
  @EnumSource(
      value = ApiVersion.class,
      names = {"V0044", "V0045"})
  void anExternalPlaceholderMatchesTheSubmitSchema(ApiVersion v) {
    JsonNode body =
        new RequestBodies(v)
            .submit(
                JobSubmission.builder(TAG)
                    .gresPerNode("gpu:h100:8")
                    .shape(JobSubmission.Shape.EXTERNAL)
                    .build());
    assertThat(schema(v).validateRequest("POST", v.slurmPath() + "/job/submit", body)).isEmpty();
    assertThat(body.path("job").path("flags").toString()).isEqualTo("[\"EXTERNAL_JOB\"]");
    assertThat(body.path("job").has("script")).isFalse();
  }

  @ParameterizedTest(name = "{0}")
  @EnumSource(
      value = ApiVersion.class,
      names = {"V0044", "V0045"},
      mode = EnumSource.Mode.EXCLUDE)
  void olderVersionsRefuseExternalPlaceholders(ApiVersion v) {
    assertThatThrownBy(
            () ->
                new RequestBodies(v)
                    .submit(JobSubmission.builder(TAG).shape(JobSubmission.Shape.EXTERNAL).build()))
        .isInstanceOf(SlurmRejectedException.class)
        .hasMessageContaining("need slurmrestd v0.0.44");
  }

  @Test
  void v0038RefusesSwitchesBeforeSendingAndSaysWhy() {
    assertThatThrownBy(
            () ->
                new RequestBodies(ApiVersion.V0038)
                    .submit(JobSubmission.builder(TAG).nodes(2).switches(1, 60).build()))
        .isInstanceOf(SlurmRejectedException.class)
        .hasMessageContaining("switch and segment requests need slurmrestd v0.0.41+");
  }

  @ParameterizedTest(name = "{0}")
  @EnumSource(value = ApiVersion.class, names = "V0038", mode = EnumSource.Mode.EXCLUDE)
  void aSegmentRequestMatchesTheSchema(ApiVersion v) {
    JsonNode body =
        new RequestBodies(v).submit(JobSubmission.builder(TAG).nodes(4).segmentSize(2).build());
    assertThat(schema(v).validateRequest("POST", v.slurmPath() + "/job/submit", body)).isEmpty();
    assertThat(body.path("job").path("segment_size").path("number").asInt()).isEqualTo(2);
  }

  @Test
  void v0038RefusesExcludedNodesBeforeSendingAndSaysWhy() {
    assertThatThrownBy(() -> new RequestBodies(ApiVersion.V0038).submit(everything(true)))
        .isInstanceOf(SlurmRejectedException.class)
        .hasMessageContaining("[gpu-node-1, gpu-node-3]")
        .hasMessageContaining("disables the excluded_nodes key");
  }

  @ParameterizedTest(name = "{0}")
  @EnumSource(ApiVersion.class)
  void updateBodyMatchesTheSchema(ApiVersion v) {
    JobUpdate u =
        new JobUpdate(
            java.util.Optional.of(false),
            java.util.OptionalInt.of(5),
            java.util.OptionalLong.of(7000),
            java.util.OptionalInt.of(30),
            java.util.Optional.of("kse:v1 pod=a/b uid=c"),
            java.util.Optional.of("inference"),
            java.util.Optional.of("inference"));
    JsonNode body = new RequestBodies(v).update(u);
    List<String> problems =
        schema(v).validateRequest("POST", v.slurmPath() + "/job/{job_id}", body);
    if (v == ApiVersion.V0038) {
      // 22.05 reuses the submission schema, which requires "environment"; the live server
      // accepts updates without it (recorded in update-ok.json, exercised by SlurmBridgeIT).
      assertThat(problems).containsExactly("$: required key 'environment' is missing");
    } else {
      assertThat(problems).isEmpty();
    }
  }

  @ParameterizedTest(name = "{0}")
  @EnumSource(value = ApiVersion.class, names = "V0038", mode = EnumSource.Mode.EXCLUDE)
  void nodeDrainAndResumeBodiesMatchTheSchema(ApiVersion v) {
    RequestBodies b = new RequestBodies(v);
    String path = v.slurmPath() + "/node/{node_name}";
    assertThat(schema(v).validateRequest("POST", path, b.nodeState("n", "DRAIN", "kse: cordoned")))
        .isEmpty();
    assertThat(schema(v).validateRequest("POST", path, b.nodeState("n", "RESUME", null))).isEmpty();
  }

  @Test
  void v0038CannotUpdateNodesAndSaysSo() {
    assertThatThrownBy(
            () -> new RequestBodies(ApiVersion.V0038).nodeState("gpu-node-1", "DRAIN", "x"))
        .isInstanceOf(SlurmRejectedException.class)
        .hasMessageContaining("gpu-node-1")
        .hasMessageContaining("no node update endpoint");
  }

  @Test
  void theValidatorCatchesWhatSlurmWouldReject() {
    ObjectNode body = new RequestBodies(ApiVersion.V0044).submit(everything(false));
    ((ObjectNode) body.get("job")).put("no_such_key", 1);
    ((ObjectNode) body.get("job")).put("nodes", 2);
    assertThat(schema(ApiVersion.V0044).validateRequest("POST", "/slurm/v0.0.44/job/submit", body))
        .containsExactlyInAnyOrder(
            "$.job: unknown key 'no_such_key'", "$.job.nodes: expected a string, got NUMBER");
  }

  static OpenApiSchema schema(ApiVersion v) {
    return OpenApiSchema.forVersion(v.id());
  }
}
