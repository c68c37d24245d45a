package io.kse.bench.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

class ApiRequestsTest {
  /** A 200-pod burst's requests as kube-apiserver counted them (raw e2e-n32-issue47-2026-11-30). */
  static final Map<String, Long> BURST =
      Map.of(
          "POST pods", 200L,
          "PATCH pods", 200L,
          "PATCH pods/status", 200L,
          "POST bindings", 200L,
          "POST events", 400L,
          "PUT leases", 38L,
          "PATCH leases", 6L,
          "GET pods", 900L,
          "LIST nodes", 3L);

  @Test
  void writesCountEveryVerbThatChangesSomethingAndNoRead() {
    assertThat(ApiRequests.writes(BURST)).isEqualTo(1244);
  }

  @Test
  void podWritesLeaveOutTheLeasesHeartbeats() {
    assertThat(ApiRequests.podWrites(BURST)).isEqualTo(1200);
    assertThat(ApiRequests.podWrites(Map.of("PUT leases", 5L, "DELETE pods", 2L))).isEqualTo(2);
  }
}
