package io.kse.extender.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.kse.slurm.SlurmConfig;
import io.kse.slurm.StateCadence;
import io.kse.slurm.cache.AllocationHints;
import io.kse.slurm.cache.SlurmStateCache;
import io.kse.slurm.resilience.ResilientSlurmClient;
import io.kse.slurm.rest.SlurmHttp;
import io.kse.slurm.rest.TokenSource;
import io.kse.slurm.testing.FakeSlurmClient;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * docs/metrics.md is what the code exports: every kse_* series family with its type, labels and
 * description, from a Prometheus scrape of every meter the extender and the bridge register (each
 * ExtenderMetrics method called once; the bridge's cache, hints, client and transport built).
 * Regenerate with {@code KSE_WRITE_DOCS=1 ./mvnw test -pl scheduler-extender
 * -Dtest=MetricsReferenceTest}.
 */
class MetricsReferenceTest {
  static final Path DOC = Path.of("..", "docs", "metrics.md");

  /** ExtenderMetrics' methods this test calls; a new one must be added here (and is checked). */
  static final Set<String> CALLED =
      Set.of(
          "verb",
          "preemption",
          "allocated",
          "bound",
          "wakeUp",
          "placeholders",
          "heldForTerminating",
          "badRequest",
          "refused",
          "eviction",
          "policyRejecting",
          "topologyDrift",
          "policyReload",
          "allocationHint",
          "gpuHold",
          "gpuHoldOverdue",
          "writer",
          "oldestPending",
          "budgetUse");

  static String scrape() throws Exception {
    PrometheusMeterRegistry r = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    ExtenderMetrics m = new ExtenderMetrics(r);
    for (String verb : List.of("filter", "prioritize", "preempt", "bind")) { // ExtenderServer's
      m.verb(verb, "ok", 1_000);
    }
    m.preemption("inference", "training", "exact");
    m.allocated(Duration.ofSeconds(1));
    m.wakeUp(Duration.ofMillis(3), Duration.ofMillis(40));
    m.bound(Duration.ofSeconds(1));
    m.placeholders(s -> 1, List.of("running"), s -> s);
    m.heldForTerminating(() -> 0);
    m.badRequest("filter");
    m.refused("Busy");
    m.eviction("evicted");
    m.policyRejecting(() -> false);
    m.topologyDrift(() -> 0);
    m.policyReload("applied");
    m.allocationHint("accepted");
    m.gpuHold("hold");
    m.gpuHoldOverdue();
    m.writer(() -> true);
    m.oldestPending(() -> Map.of("inference", 1.0));
    m.budgetUse(() -> Map.of("inference", 0.5));
    m.beforeScrape();

    FakeSlurmClient fake = new FakeSlurmClient(Clock.systemUTC(), "gpu-node-0");
    SlurmStateCache cache =
        new SlurmStateCache(
            fake,
            StateCadence.everyPass(Duration.ofSeconds(1), Duration.ZERO),
            Clock.systemUTC(),
            r);
    cache.pollOnce();
    new AllocationHints(cache, Duration.ofMillis(20), r).allocated(1);
    SlurmConfig cfg =
        SlurmConfig.of(URI.create("http://127.0.0.1:9"), Optional.of("kse"), Path.of("jwt"));
    new ResilientSlurmClient(fake, cfg, r).ping();
    io.kse.slurm.SlurmClients.transportMeters(
        new SlurmHttp(
            URI.create("http://127.0.0.1:9"),
            Optional.empty(),
            TokenSource.of("x"),
            Duration.ofSeconds(1),
            Duration.ofSeconds(1),
            Optional.empty()),
        r);
    return r.scrape();
  }

  static String reference(String scrape) {
    Map<String, String[]> families = new TreeMap<>(); // name -> type, help
    Map<String, Set<String>> labels = new TreeMap<>();
    Pattern sample = Pattern.compile("^(kse_[a-z_]+?)(_bucket|_count|_sum)?\\{([^}]*)\\}");
    for (String line : scrape.lines().toList()) {
      if (line.startsWith("# HELP kse_")) {
        String[] p = line.substring(7).split(" ", 2);
        families.computeIfAbsent(p[0], k -> new String[2])[1] = p.length > 1 ? p[1] : "";
      } else if (line.startsWith("# TYPE kse_")) {
        String[] p = line.substring(7).split(" ", 2);
        families.computeIfAbsent(p[0], k -> new String[2])[0] = p[1];
      } else {
        Matcher mm = sample.matcher(line);
        if (mm.find()) {
          Set<String> keys = labels.computeIfAbsent(mm.group(1), k -> new TreeSet<>());
          for (String kv : mm.group(3).split(",")) {
            String k = kv.contains("=") ? kv.substring(0, kv.indexOf('=')).trim() : "";
            if (!k.isEmpty() && !k.equals("le")) {
              keys.add(k);
            }
          }
        }
      }
    }
    StringBuilder out =
        new StringBuilder(
            "# Metrics reference\n\n"
                + "Every `kse_*` series family the extender exports on its ops port (`/metrics`),"
                + " generated from the code by\n`MetricsReferenceTest` (which fails when this file"
                + " differs: regenerate with\n`KSE_WRITE_DOCS=1 ./mvnw test -pl scheduler-extender"
                + " -Dtest=MetricsReferenceTest`). The alerts that read them:\n"
                + "[runbook.md](runbook.md) \"Alerts\". Labels never name pods or nodes. JVM and"
                + " process metrics (`jvm_*`,\n`process_*`) are Micrometer's own.\n\n"
                + "| metric | type | labels | what |\n| --- | --- | --- | --- |\n");
    families.forEach(
        (name, th) ->
            out.append("| `")
                .append(name)
                .append("` | ")
                .append(th[0])
                .append(" | ")
                .append(String.join(", ", labels.getOrDefault(name, Set.of())))
                .append(" | ")
                .append(th[1] == null ? "" : th[1].replace("|", "\\|"))
                .append(" |\n"));
    return out.toString();
  }

  @Test
  void docsMetricsMdIsWhatTheCodeExports() throws Exception {
    String generated = reference(scrape());
    if ("1".equals(System.getenv("KSE_WRITE_DOCS"))) {
      Files.writeString(DOC, generated);
    }
    assertThat(Files.readString(DOC))
        .as("docs/metrics.md is stale: regenerate it (see this test's comment)")
        .isEqualTo(generated);
  }

  @Test
  void everyMeterOfTheExtenderIsCalledHere() {
    Set<String> declared = new TreeSet<>();
    for (Method method : ExtenderMetrics.class.getDeclaredMethods()) {
      if (Modifier.isPublic(method.getModifiers())
          && !Arrays.asList("registry", "beforeScrape").contains(method.getName())) {
        declared.add(method.getName());
      }
    }
    assertThat(declared)
        .as("ExtenderMetrics' meters this test must call")
        .isEqualTo(new TreeSet<>(CALLED));
  }
}
