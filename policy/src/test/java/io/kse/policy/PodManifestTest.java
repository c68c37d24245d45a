package io.kse.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class PodManifestTest {
  @Test
  void readsTheExamplePod() {
    PodFacts p = PodManifest.parse(Policies.example("pods/llm-nvlink.yaml"));
    assertThat(p.ref()).isEqualTo("serving/llm-70b-00001-deployment-6d9f-x7k2p");
    assertThat(p.cpuMillis()).isEqualTo(12_025);
    assertThat(p.memoryBytes()).isEqualTo((200L << 30) + (50L << 20));
    assertThat(p.gpus()).isEqualTo(8);
    assertThat(p.priority()).hasValue(100000);
    assertThat(p.knativeService()).contains("llm-70b");
  }

  @Test
  void initContainersCountAtTheirMaximumAndLimitsStandInForRequests() {
    PodFacts p =
        PodManifest.parse(
            """
        kind: Pod
        metadata: {name: x, namespace: n}
        spec:
          initContainers:
            - {name: i1, resources: {requests: {cpu: "8"}}}
          containers:
            - {name: a, resources: {requests: {cpu: 500m}, limits: {nvidia.com/gpu: "2", memory: 1Gi}}}
            - {name: b, resources: {requests: {cpu: 500m, memory: 1Gi}}}
        """);
    assertThat(p.cpuMillis()).isEqualTo(8000);
    assertThat(p.memoryBytes()).isEqualTo(2L << 30);
    assertThat(p.gpus()).isEqualTo(2);
  }

  @Test
  void namesTheBadQuantityAndTheWrongKind() {
    assertThatThrownBy(
            () ->
                PodManifest.parse(
                    "kind: Pod\nmetadata: {name: x}\nspec:\n  containers:\n"
                        + "    - {name: c, resources: {requests: {cpu: lots}}}\n"))
        .hasMessageContaining("container c resource cpu: not a Kubernetes quantity: 'lots'");
    assertThatThrownBy(() -> PodManifest.parse("kind: Deployment\nmetadata: {name: x}\n"))
        .hasMessageContaining("expected a Pod manifest (kind: Pod), got Deployment");
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource({"500m,500", "2,2000", "0.1,100", "1.5,1500", "100u,1", "1e3,1000000"})
  void cpuQuantities(String q, long millis) {
    assertThat(Quantity.millis(q)).isEqualTo(millis);
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource({
    "1Gi,1073741824",
    "128974848,128974848",
    "129e6,129000000",
    "123Mi,128974848",
    "1k,1000"
  })
  void memoryQuantities(String q, long bytes) {
    assertThat(Quantity.units(q)).isEqualTo(bytes);
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource({"90s,90", "5m,300", "1h30m,5400", "2d,172800"})
  void durations(String d, long seconds) {
    assertThat(Durations.parse(d).getSeconds()).isEqualTo(seconds);
  }

  @Test
  void badDurationsAreNamed() {
    assertThatThrownBy(() -> Durations.parse("5 m")).hasMessageContaining("not a duration: '5 m'");
    assertThatThrownBy(() -> Durations.parse("m5")).hasMessageContaining("not a duration");
    assertThat(Durations.slurm(java.time.Duration.ofSeconds(90061))).isEqualTo("1-01:01:01");
  }
}
