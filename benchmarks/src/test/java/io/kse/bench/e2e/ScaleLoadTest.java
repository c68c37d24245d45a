package io.kse.bench.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

class ScaleLoadTest {
  private static final String METRICS =
      String.join(
          "\n",
          "# HELP kse_slurm_job_table_reads_total Reads of slurmctld's whole job table that ended",
          "# TYPE kse_slurm_job_table_reads_total counter",
          "kse_slurm_job_table_reads_total{how=\"catch_up\"} 1.0",
          "kse_slurm_job_table_reads_total{how=\"listing\",} 1.0",
          "kse_slurm_response_bytes_total 4.58E8",
          "kse_slurm_request_duration_seconds_count{api_version=\"v0.0.44\",operation=\"list_jobs\"} 2.0");

  @Test
  void readsTheJobTableReadsByHowAndTheBytesRead() {
    assertThat(ScaleLoad.readsAndBytes(METRICS))
        .containsExactlyInAnyOrderEntriesOf(
            Map.of("table_reads_catch_up", 1.0, "table_reads_listing", 1.0, "bytes_read", 4.58e8));
  }

  /**
   * The rig's window began while a catch-up still read the jobs made since (16 % of slurmctld's RPC
   * time in the window was that): the wait is for a read of the table that ended, not a call begun.
   */
  @Test
  void theTakeoverIsOverWhenACatchUpOrASecondListingEnded() {
    assertThat(ScaleLoad.tookOver(Map.of("table_reads_listing", 1.0))).isFalse();
    assertThat(ScaleLoad.tookOver(Map.of("table_reads_listing", 1.0, "calls_all_job_states", 1.0)))
        .as("every job's state asked, the jobs made since not yet read")
        .isFalse();
    assertThat(ScaleLoad.tookOver(Map.of("table_reads_listing", 1.0, "table_reads_catch_up", 1.0)))
        .isTrue();
    assertThat(ScaleLoad.tookOver(Map.of("table_reads_listing", 2.0))).isTrue();
  }
}
