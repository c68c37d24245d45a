package io.kse.slurm;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

class SlurmReleaseTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  /** The two forms seen live: v0.0.38 (22.05) and v0.0.43/v0.0.45 (26.05). */
  @Test
  void theReleaseIsReadFromEveryMetaFormSeenLive() throws Exception {
    var v38 =
        JSON.readTree(
            """
            {"plugin": {"type": "openapi/v0.0.38", "name": "Slurm OpenAPI v0.0.38"},
             "Slurm": {"version": {"major": 22, "micro": 8, "minor": 5}, "release": "22.05.8"}}
            """);
    var v45 =
        JSON.readTree(
            """
            {"plugin": {"type": "openapi/slurmctld", "data_parser": "data_parser/v0.0.45"},
             "slurm": {"version": {"major": "26", "micro": "5", "minor": "05"},
                       "release": "26.05.5", "cluster": "kse"}}
            """);
    assertThat(SlurmRelease.fromMeta(v38)).contains(new SlurmRelease(22, 5, 8));
    assertThat(SlurmRelease.fromMeta(v45)).contains(new SlurmRelease(26, 5, 5));
    assertThat(SlurmRelease.fromMeta(v45).get()).hasToString("26.05.5");
  }

  @Test
  void theVersionNumbersServeWhereTheReleaseIsMissingAndNothingIsGuessed() throws Exception {
    assertThat(
            SlurmRelease.fromMeta(
                JSON.readTree(
                    "{\"slurm\": {\"version\": {\"major\": \"24\", \"minor\": \"11\", \"micro\": \"5\"}}}")))
        .contains(new SlurmRelease(24, 11, 5));
    assertThat(SlurmRelease.fromMeta(JSON.readTree("{\"plugin\": {}}"))).isEmpty();
    assertThat(SlurmRelease.fromMeta(JSON.readTree("{\"slurm\": {\"release\": \"master\"}}")))
        .isEmpty();
    assertThat(SlurmRelease.fromMeta(null)).isEmpty();
  }

  /** SchedMD bug 19110: fixed in 23.11.5, so 23.11.4 and 23.02 still mix shards and whole GPUs. */
  @Test
  void shardsAreKeptApartFrom23115On() {
    assertThat(new SlurmRelease(22, 5, 8).keepsShardsApart()).isFalse();
    assertThat(new SlurmRelease(23, 2, 7).keepsShardsApart()).isFalse();
    assertThat(new SlurmRelease(23, 11, 4).keepsShardsApart()).isFalse();
    assertThat(new SlurmRelease(23, 11, 5).keepsShardsApart()).isTrue();
    assertThat(new SlurmRelease(24, 11, 5).keepsShardsApart()).isTrue();
    assertThat(new SlurmRelease(26, 5, 5).keepsShardsApart()).isTrue();
  }
}
