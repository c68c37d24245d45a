package io.kse.extender.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** The Prometheus names the alerts query (manifests/overlays/monitoring/prometheus-rule.yaml). */
class ExtenderMetricsTest {
  final PrometheusMeterRegistry prometheus = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  final ExtenderMetrics metrics = new ExtenderMetrics(prometheus);

  String scrape() {
    metrics.beforeScrape();
    return prometheus.scrape();
  }

  @Test
  void theWriterGaugeFollowsTheLease() {
    AtomicBoolean writer = new AtomicBoolean();
    metrics.writer(writer::get);
    assertThat(scrape()).contains("kse_writer 0.0");
    writer.set(true);
    assertThat(scrape()).contains("kse_writer 1.0");
  }

  @Test
  void perTierGaugesHaveASeriesOnlyForTheTiersThatHaveAValueNow() {
    AtomicReference<Map<String, Double>> pending =
        new AtomicReference<>(Map.of("inference", 42.0, "batch", 7.5));
    AtomicReference<Map<String, Double>> budget = new AtomicReference<>(Map.of("inference", 0.25));
    metrics.oldestPending(pending::get);
    metrics.budgetUse(budget::get);
    assertThat(scrape())
        .contains("kse_placeholder_pending_oldest_seconds{tier=\"inference\"} 42.0")
        .contains("kse_placeholder_pending_oldest_seconds{tier=\"batch\"} 7.5")
        .contains("kse_preemption_budget_used_ratio{tier=\"inference\"} 0.25");
    // the batch placeholder ran; the budget's window slid
    pending.set(Map.of("inference", 50.0));
    budget.set(Map.of("inference", 1.0));
    assertThat(scrape())
        .contains("kse_placeholder_pending_oldest_seconds{tier=\"inference\"} 50.0")
        .doesNotContain("tier=\"batch\"")
        .contains("kse_preemption_budget_used_ratio{tier=\"inference\"} 1.0");
  }
}
