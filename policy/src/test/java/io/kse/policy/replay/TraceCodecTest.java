package io.kse.policy.replay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.StringReader;
import java.io.StringWriter;
import java.time.Duration;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

class TraceCodecTest {
  static final String HEADER =
      "{\"kind\":\"header\",\"version\":1,\"start\":\"2026-11-20T00:00:00Z\",\"lengthSeconds\":3600,\"source\":\"hand\"}";

  static String write(Trace t) {
    StringWriter w = new StringWriter();
    TraceCodec.write(t, w);
    return w.toString();
  }

  @ParameterizedTest
  @ValueSource(longs = {1, 2, 3, 42, 9_001})
  void aSyntheticTraceRoundTripsExactly(long seed) {
    Trace t =
        SyntheticTraces.generate(
            new SyntheticTraces.Shape(Duration.ofHours(6), 40, 0.5, 0.2, "serving", 4, "training"),
            seed);
    String text = write(t);
    Trace back = TraceCodec.read(new StringReader(text));
    assertThat(back).isEqualTo(t);
    assertThat(write(back)).isEqualTo(text);
    // one line per event after the header, in time order
    assertThat(text.lines().count()).isEqualTo(1 + t.inference().size() + t.slurmJobs().size());
  }

  static Stream<Arguments> badTraces() {
    return Stream.of(
        Arguments.of(
            "{\"kind\":\"slurm\"}",
            "trace line 1: kind: the first line must be the header, got \"slurm\""),
        Arguments.of("HEADER\nnot json", "trace line 2: not JSON"),
        Arguments.of(
            "HEADER\n{\"kind\":\"pod\"}",
            "trace line 2: kind: expected header, inference or slurm, got \"pod\""),
        Arguments.of(
            "HEADER\n{\"kind\":\"inference\",\"atSeconds\":1,\"id\":\"a\",\"namespace\":\"s\",\"gpus\":-2,\"nodes\":1,\"lifetimeSeconds\":5}",
            "trace line 2: gpus: expected 0 to 1024, got -2"),
        Arguments.of(
            "HEADER\n{\"kind\":\"inference\",\"atSeconds\":4000,\"id\":\"a\",\"namespace\":\"s\",\"gpus\":1,\"nodes\":1,\"lifetimeSeconds\":5}",
            "trace line 2: atSeconds: after the trace's end"),
        Arguments.of(
            "HEADER\n{\"kind\":\"inference\",\"atSeconds\":1,\"id\":\"a\",\"namespace\":\"s\",\"gpus\":1,\"nodes\":1,\"lifetimeSeconds\":5,\"gpu\":3}",
            "trace line 2: gpu: unknown key"),
        Arguments.of(
            "HEADER\n{\"kind\":\"slurm\",\"atSeconds\":1,\"id\":\"j\",\"user\":\"u\",\"account\":\"a\",\"partition\":\"p\",\"nodes\":1,\"gpusPerNode\":8,\"runtimeSeconds\":0}",
            "trace line 2: runtimeSeconds: expected more than 0 seconds"),
        Arguments.of(
            "HEADER\n{\"kind\":\"slurm\",\"atSeconds\":1,\"id\":\"j\",\"user\":\"u\",\"account\":\"a\",\"partition\":\"p\",\"nodes\":1,\"gpusPerNode\":8,\"runtimeSeconds\":9}\n{\"kind\":\"slurm\",\"atSeconds\":2,\"id\":\"j\",\"user\":\"u\",\"account\":\"a\",\"partition\":\"p\",\"nodes\":1,\"gpusPerNode\":8,\"runtimeSeconds\":9}",
            "trace line 3: id: \"j\" appears twice"),
        Arguments.of(
            "{\"kind\":\"header\",\"version\":2,\"start\":\"2026-11-20T00:00:00Z\",\"lengthSeconds\":3600,\"source\":\"x\"}",
            "trace line 1: version: this kse-policy reads version 1, got 2"));
  }

  @ParameterizedTest
  @MethodSource("badTraces")
  void badTracesAreRefusedNamingTheLineAndTheField(String text, String message) {
    String trace = text.replace("HEADER", HEADER).replace("\\n", "\n");
    assertThatThrownBy(() -> TraceCodec.read(new StringReader(trace)))
        .isInstanceOf(TraceCodec.TraceException.class)
        .hasMessageStartingWith(message);
  }

  @org.junit.jupiter.api.Test
  void anEmptyTraceIsRefused() {
    assertThatThrownBy(() -> TraceCodec.read(new StringReader("\n\n")))
        .hasMessage("trace: empty (no header line)");
  }
}
