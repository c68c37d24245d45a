package io.kse.bench;

import io.kse.policy.Decision;
import io.kse.policy.PlacementPolicy;
import io.kse.policy.PodFacts;
import io.kse.policy.PodManifest;
import io.kse.policy.PolicyParser;
import io.kse.policy.PreemptionLedger;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Cost of one placement decision with the realistic lab policy (4 tiers, budgets, overrides), for a
 * pod that matches the first tier, one that matches by priority range, one that falls to the
 * default, and one with an NVLink-domain topology. Target: under 20 µs per pod.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class PolicyEvaluationBenchmark {
  @Param({"critical", "range", "default", "nvlink"})
  public String pod;

  private PlacementPolicy policy;
  private PreemptionLedger ledger;
  private PodFacts facts;
  private final Instant now = Instant.parse("2026-11-22T06:00:00Z");

  @Setup
  public void setUp() throws IOException {
    policy = new PlacementPolicy(PolicyParser.parse(resource("/bench/lab.yaml"), "lab.yaml"));
    ledger = new PreemptionLedger();
    ledger.record("inference", 8, 1, now.minusSeconds(60));
    PodFacts base = PodManifest.parse(resource("/bench/llm-nvlink.yaml"));
    Map<String, String> annotations = pod.equals("nvlink") ? base.annotations() : Map.of();
    facts =
        new PodFacts(
            pod.equals("default") ? "other" : "serving",
            base.name(),
            base.uid(),
            base.labels(),
            annotations,
            pod.equals("critical")
                ? java.util.Optional.of("inference-critical")
                : java.util.Optional.empty(),
            pod.equals("default") ? java.util.OptionalInt.empty() : base.priority(),
            base.owner(),
            base.cpuMillis(),
            base.memoryBytes(),
            base.extendedResources(),
            base.activeDeadlineSeconds());
  }

  @Benchmark
  public Decision decide() {
    return policy.decide(facts, ledger, now);
  }

  private static String resource(String name) throws IOException {
    try (InputStream in = PolicyEvaluationBenchmark.class.getResourceAsStream(name)) {
      if (in == null) {
        throw new IOException("missing resource " + name);
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }
}
