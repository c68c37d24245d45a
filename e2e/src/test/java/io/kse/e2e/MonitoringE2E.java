package io.kse.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.Pod;
import io.kse.slurm.testing.LocalSlurmCluster;
import java.net.URI;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 32: the alerts and the Grafana dashboard against a real Prometheus (the stack's, Debian's
 * package, scraping the extender and the slurm-inference kube-scheduler every 2 s and evaluating
 * manifests/overlays/monitoring/prometheus-rule.yaml every 2 s, its time windows divided by the
 * stack's KSE_E2E_ALERT_TIME_DIVISOR, 6: for: 1m waits 10 s here; promtool's tests in
 * testing/monitoring hold the windows as written).
 */
class MonitoringE2E extends Scenario {
  /**
   * Dashboard queries that may rightly have no data here, and why. Everything else must return
   * series once pods were placed, one waits and a malformed request was refused.
   */
  static final Map<String, String> MAY_BE_EMPTY =
      Map.of(
          "kse_prioritize_duration_seconds",
              "the shipped scheduler configuration has no prioritizeVerb",
          "kse_preempt_duration_seconds",
              "kube-scheduler calls preempt only when a pod could preempt Kubernetes pods",
          "kse_preemptions_total",
              "counts Slurm preemptions attributed to placeholders: PreemptionE2E's work",
          "kse_preemption_budget_used_ratio", "the stack's policy has no preemption budget");

  PrometheusApi prometheus;

  @BeforeEach
  void withPrometheus() {
    assumeTrue(stack.managed(), "the stack's own Prometheus");
    var url = stack.envIfSet("KSE_E2E_PROMETHEUS_URL");
    assumeTrue(url.isPresent(), "the stack runs Prometheus (KSE_E2E_PROMETHEUS=on)");
    prometheus = new PrometheusApi(URI.create(url.get()));
  }

  @Test
  void everyQueryOfTheDashboardAndTheAlertsRunsAndTheirSeriesExist() throws Exception {
    // every GPU node but one busy with work of the pods' own tier (Slurm preempts none of it)
    List<String> gpuNodes = stack.gpuNodes();
    busyGpuNodes("inference", gpuNodes.subList(1, gpuNodes.size()));
    awaitBound(create(inferencePod("served", 2)).getMetadata().getName());
    Pod evicted = awaitBound(create(inferencePod("ended", 1)).getMetadata().getName());
    scancel(placeholderOf(evicted).id()); // kse_evictions_total
    // a whole node's GPUs: none has them free, so this one waits (the pending-age gauge)
    create(inferencePod("waiting", 8));
    // a malformed request: kse_bad_requests_total
    var http = java.net.http.HttpClient.newHttpClient();
    var bad =
        http.send(
            java.net.http.HttpRequest.newBuilder(verbs("/filter"))
                .header("Content-Type", "application/json")
                .POST(java.net.http.HttpRequest.BodyPublishers.ofString("{\"Pod\": 7}"))
                .build(),
            java.net.http.HttpResponse.BodyHandlers.ofString());
    assertThat(bad.statusCode()).isEqualTo(400);

    List<String> dashboard = dashboardQueries();
    assertThat(dashboard).hasSizeGreaterThan(10);
    await("every dashboard query returns series, except those that may rightly be empty")
        .atMost(Duration.ofSeconds(60))
        .pollInterval(Duration.ofSeconds(2))
        .untilAsserted(
            () -> {
              for (String q : dashboard) {
                PrometheusApi.Answer a = prometheus.query(q);
                assertThat(a.error()).as(q).isNull();
                if (MAY_BE_EMPTY.keySet().stream().noneMatch(q::contains)) {
                  assertThat(a.series()).as("series of the dashboard's " + q).isNotEmpty();
                }
              }
            });

    List<JsonNode> rules = prometheus.rules();
    assertThat(rules).as("the alerts loaded").hasSizeGreaterThanOrEqualTo(14);
    Set<String> read = new TreeSet<>();
    for (JsonNode rule : rules) {
      String name = rule.path("name").asText();
      assertThat(rule.path("health").asText())
          .as(name + ": " + rule.path("lastError"))
          .isEqualTo("ok");
      assertThat(prometheus.query(rule.path("query").asText()).error()).as(name).isNull();
      read.addAll(metricsIn(rule.path("query").asText()));
    }
    await("every metric an alert reads has series")
        .atMost(Duration.ofSeconds(30))
        .pollInterval(Duration.ofSeconds(2))
        .untilAsserted(
            () -> {
              for (String metric : read) {
                if (!MAY_BE_EMPTY.containsKey(metric)) {
                  assertThat(prometheus.query("count({__name__=\"" + metric + "\"})").series())
                      .as("series of " + metric + ", which an alert reads")
                      .isNotEmpty();
                }
              }
            });
    // a healthy stack fires nothing (KseNoWriter would, were kse_writer missing)
    for (JsonNode rule : rules) {
      assertThat(prometheus.alertStates(rule.path("name").asText()))
          .as(rule.path("name").asText())
          .doesNotContain("firing");
    }
  }

  /** slurmrestd stops: KseSlurmUnreachable fires within its for: window; it resolves after. */
  @Test
  void slurmrestdStoppedFiresSlurmUnreachableWhichResolvesOnceItIsBack() {
    LocalSlurmCluster cluster = stack.slurmCluster();
    long t0 = System.nanoTime();
    cluster.stopRest();
    try {
      await("KseSlurmUnreachable firing")
          .atMost(Duration.ofSeconds(150))
          .pollInterval(Duration.ofSeconds(2))
          .until(() -> prometheus.alertStates("KseSlurmUnreachable").contains("firing"));
    } finally {
      cluster.startRest();
    }
    long fired = System.nanoTime();
    await("KseSlurmUnreachable resolved")
        .atMost(Duration.ofSeconds(90))
        .pollInterval(Duration.ofSeconds(2))
        .until(() -> prometheus.alertStates("KseSlurmUnreachable").isEmpty());
    System.out.printf(
        "[e2e] KseSlurmUnreachable fired %d s after slurmrestd stopped (for: 1m over the divisor),"
            + " resolved %d s after"
            + " it was back%n",
        (fired - t0) / 1_000_000_000, (System.nanoTime() - fired) / 1_000_000_000);
  }

  /**
   * Issue 44: the Slurm token as the extender reads it (its mounted file, re-read when it changes).
   * One that expires within the hour makes KseSlurmTokenExpiresSoon pending (its for: 10m is left
   * out here); one slurmrestd refuses (a wrong signature, as after a JWT key change) fires
   * KseSlurmUnauthorized, which KseSlurmUnreachable never covered; the good token back resolves
   * both, without a restart.
   */
  @Test
  void aShortLivedThenARefusedTokenRaiseTheirAlertsAndTheGoodOneResolvesThem() throws Exception {
    LocalSlurmCluster cluster = stack.slurmCluster();
    java.nio.file.Path file = java.nio.file.Path.of(cluster.env("KSE_LAB_JWT_FILE"));
    String good = Files.readString(file);
    long t0 = System.nanoTime();
    try {
      String hour =
          cluster
              .cli(
                  "scontrol",
                  "token",
                  "username=" + cluster.env("KSE_LAB_JWT_USER"),
                  "lifespan=3600")
              .trim()
              .replaceFirst("^SLURM_JWT=", "");
      rewrite(file, hour);
      await("KseSlurmTokenExpiresSoon pending")
          .atMost(Duration.ofSeconds(60))
          .pollInterval(Duration.ofSeconds(2))
          .until(() -> prometheus.alertStates("KseSlurmTokenExpiresSoon").contains("pending"));
      String good0 = good.trim();
      rewrite(file, good0.substring(0, good0.lastIndexOf('.') + 1) + "c2lnbmVkIGVsc2V3aGVyZQ");
      await("KseSlurmUnauthorized firing")
          .atMost(Duration.ofSeconds(240))
          .pollInterval(Duration.ofSeconds(2))
          .until(() -> prometheus.alertStates("KseSlurmUnauthorized").contains("firing"));
      assertThat(prometheus.alertStates("KseSlurmUnreachable"))
          .as("slurmrestd answers: the circuit stays closed")
          .isEmpty();
    } finally {
      rewrite(file, good);
    }
    long fired = System.nanoTime();
    await("both resolved with the good token back")
        .atMost(Duration.ofSeconds(240))
        .pollInterval(Duration.ofSeconds(2))
        .until(
            () ->
                prometheus.alertStates("KseSlurmUnauthorized").isEmpty()
                    && prometheus.alertStates("KseSlurmTokenExpiresSoon").isEmpty());
    System.out.printf(
        "[e2e] token alerts: KseSlurmUnauthorized fired %d s after the short token (for: 2m over the"
            + " divisor),"
            + " both resolved %d s after the good token was back%n",
        (fired - t0) / 1_000_000_000, (System.nanoTime() - fired) / 1_000_000_000);
  }

  /** Rewrites the token file in place (a bind mount follows the inode), with a new mtime. */
  private static void rewrite(java.nio.file.Path file, String token) throws java.io.IOException {
    Files.writeString(file, token);
    Files.setLastModifiedTime(
        file, java.nio.file.attribute.FileTime.from(java.time.Instant.now().plusSeconds(1)));
  }

  /** An eviction a PodDisruptionBudget refuses fires KseEvictionBlockedByPdb. */
  @Test
  void anEvictionBlockedByADisruptionBudgetFiresItsAlert() {
    keepOneModelServer();
    Pod p = awaitBound(create(inferencePod("guarded", 1)).getMetadata().getName());
    await().atMost(CONVERGE).until(() -> pdbReady("keep-one"));
    scancel(placeholderOf(p).id());
    await("EvictionBlocked")
        .atMost(CONVERGE)
        .untilAsserted(() -> assertThat(eventReasons("guarded")).contains("EvictionBlocked"));
    await("KseEvictionBlockedByPdb firing")
        .atMost(Duration.ofSeconds(30))
        .pollInterval(Duration.ofSeconds(1))
        .until(() -> prometheus.alertStates("KseEvictionBlockedByPdb").contains("firing"));
  }

  /**
   * The dashboard cannot be rendered here (Grafana does not run): its structure is checked instead.
   * Every panel reads the one Prometheus data source variable, so importing it asks for nothing
   * else.
   */
  @Test
  void theDashboardReadsOnlyItsPrometheusDataSourceVariable() throws Exception {
    JsonNode d = dashboard();
    JsonNode variable = null;
    for (JsonNode v : d.path("templating").path("list")) {
      if (v.path("name").asText().equals("datasource")) {
        variable = v;
      }
    }
    assertThat(variable).as("a datasource variable").isNotNull();
    assertThat(variable.path("type").asText()).isEqualTo("datasource");
    assertThat(variable.path("query").asText()).isEqualTo("prometheus");
    List<JsonNode> panels = d.findValues("targets");
    assertThat(panels).isNotEmpty();
    for (JsonNode ds : d.findValues("datasource")) {
      if (ds.isObject()) {
        assertThat(ds.path("uid").asText()).as(ds.toString()).isEqualTo("${datasource}");
      }
    }
    for (JsonNode targets : panels) {
      targets.forEach(t -> assertThat(t.path("expr").asText()).as(t.toString()).isNotBlank());
    }
  }

  static JsonNode dashboard() throws java.io.IOException {
    return new ObjectMapper()
        .readTree(
            Files.readString(
                E2eStack.repo()
                    .resolve("manifests/overlays/monitoring/dashboards/kube-slurm-extender.json")));
  }

  /** Every panel query of the Grafana dashboard, its variables resolved as Grafana would. */
  static List<String> dashboardQueries() throws java.io.IOException {
    JsonNode d = dashboard();
    List<String> out = new ArrayList<>();
    d.findValues("expr").forEach(e -> out.add(e.asText().replace("$__rate_interval", "5m")));
    return out;
  }

  private static final Pattern METRIC = Pattern.compile("\\b(kse_[a-z_]+|up)\\b");

  /** The metric names a query reads (those written out; a {__name__=~…} selector is not). */
  static Set<String> metricsIn(String promql) {
    Set<String> out = new TreeSet<>();
    Matcher m = METRIC.matcher(promql);
    while (m.find()) {
      out.add(m.group(1));
    }
    return out;
  }
}
