package io.kse.extender.wire;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kse.extender.k8s.PodRef;
import java.io.IOException;
import java.io.InputStream;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class FilterWireTest {
  static byte[] fixture(String name) {
    try (InputStream in = FilterWireTest.class.getResourceAsStream("/wire/" + name)) {
      return in.readAllBytes();
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  @Test
  void readsANodeCacheCapableRequestAndSkipsTheRestOfThePod() {
    FilterRequest r = FilterRequest.parse(fixture("filter-names.json"));
    assertThat(r.pod())
        .isEqualTo(new PodRef("serving", "llm-0", "6f1c2d3e-0000-4000-8000-000000000001"));
    assertThat(r.schedulerName()).isEqualTo("slurm-inference");
    assertThat(r.annotations()).containsEntry("kse.io/topology", "nvlink-domain");
    assertThat(r.nodeNames())
        .containsExactly("gpu-node-0", "gpu-node-1", "gpu-node-2", "cpu-node-0");
    assertThat(r.fullNodes()).isFalse();
  }

  @Test
  void answersWithEveryKeyPresentAndOneReasonPerRejectedNode() throws Exception {
    FilterRequest r = FilterRequest.parse(fixture("filter-names.json"));
    JsonNode out =
        new ObjectMapper()
            .readTree(FilterResponse.write(r, List.of("gpu-node-1"), "kse: elsewhere", false));
    assertThat(out.get("Nodes").isNull()).isTrue();
    assertThat(out.get("NodeNames").toString()).isEqualTo("[\"gpu-node-1\"]");
    assertThat(out.get("FailedNodes").size()).isZero();
    assertThat(out.get("FailedAndUnresolvableNodes").size()).isEqualTo(3);
    assertThat(out.get("FailedAndUnresolvableNodes").get("cpu-node-0").asText())
        .isEqualTo("kse: elsewhere");
    assertThat(out.get("Error").asText()).isEmpty();
  }

  @Test
  void echoesFullNodeObjectsWhenTheSchedulerIsNotNodeCacheCapable() throws Exception {
    FilterRequest r = FilterRequest.parse(fixture("filter-nodes.json"));
    assertThat(r.fullNodes()).isTrue();
    assertThat(r.nodeNames()).containsExactly("gpu-node-0", "gpu-node-1");
    JsonNode out =
        new ObjectMapper().readTree(FilterResponse.write(r, List.of("gpu-node-0"), "x", false));
    assertThat(out.get("NodeNames").isNull()).isTrue();
    assertThat(out.path("Nodes").path("items")).hasSize(1);
    assertThat(
            out.path("Nodes")
                .path("items")
                .get(0)
                .path("metadata")
                .path("labels")
                .path("kse.io/nvlink-domain")
                .asText())
        .isEqualTo("nvl-0");
    assertThat(out.path("FailedAndUnresolvableNodes").path("gpu-node-1").asText()).isEqualTo("x");
  }

  @Test
  void escapesUnusualNodeNamesAndReasonsCorrectly() throws Exception {
    FilterRequest r =
        FilterRequest.parse(
            ("{\"Pod\":{\"metadata\":{\"name\":\"a\",\"uid\":\"u\"}},"
                    + "\"NodeNames\":[\"n1\",\"we\\\"ird\\u00e9\",\"n3\"]}")
                .getBytes());
    String reason = "kse: job \"7\" is \u00e9\\pending";
    JsonNode out =
        new ObjectMapper().readTree(FilterResponse.write(r, List.of("n3"), reason, false));
    assertThat(out.get("FailedAndUnresolvableNodes").get("we\"ird\u00e9").asText())
        .isEqualTo(reason);
    assertThat(out.get("FailedAndUnresolvableNodes").get("n1").asText()).isEqualTo(reason);
    JsonNode plain =
        new ObjectMapper()
            .readTree(
                FilterResponse.write(
                    FilterRequest.parse(fixture("filter-names.json")), List.of(), reason, false));
    assertThat(plain.get("FailedAndUnresolvableNodes").get("gpu-node-0").asText())
        .isEqualTo(reason);
    assertThat(plain.get("FailedAndUnresolvableNodes").size()).isEqualTo(4);
  }

  @Test
  void acceptsLowerCaseKeysAsGoDoes() {
    FilterRequest r =
        FilterRequest.parse(
            "{\"pod\":{\"metadata\":{\"name\":\"a\",\"uid\":\"u\"}},\"nodenames\":[\"n\"]}"
                .getBytes());
    assertThat(r.pod()).isEqualTo(new PodRef("default", "a", "u"));
    assertThat(r.nodeNames()).containsExactly("n");
  }

  @ParameterizedTest(name = "{1}")
  @CsvSource(
      delimiter = '|',
      value = {
        "{\"Pod\":null,\"NodeNames\":[]}|ExtenderArgs.Pod is missing",
        "{\"NodeNames\":[]}|ExtenderArgs.Pod is missing",
        "{\"Pod\":{\"metadata\":{\"name\":\"a\"}},\"NodeNames\":[]}|ExtenderArgs.Pod has no metadata.uid",
        "{\"Pod\":{\"metadata\":{\"name\":\"a\",\"uid\":\"u\"}}}|neither NodeNames nor Nodes",
        "{\"Pod\":{\"metadata\":{\"name\":\"a\",\"uid\":\"u\"}},\"NodeNames\":[1]}|NodeNames must hold strings",
        "{\"Pod\":{\"metadata\":{\"name\":\"a\",\"uid\":\"u\"}},\"NodeNames\":\"n\"}|NodeNames must be an array",
        "{\"Pod\":[],\"NodeNames\":[]}|ExtenderArgs.Pod must be an object",
        "[1,2]|ExtenderArgs must be a JSON object",
        "{\"Pod\":{|is not valid JSON",
        "{\"Pod\":{\"metadata\":{\"name\":\"a\",\"uid\":\"u\"}},\"Nodes\":{\"items\":[{\"metadata\":{}}]}}|a node without metadata.name"
      })
  void namesWhatIsWrongWithABadRequest(String body, String message) {
    assertThatThrownBy(() -> FilterRequest.parse(body.getBytes()))
        .isInstanceOf(BadExtenderRequestException.class)
        .hasMessageContaining(message);
  }
}
