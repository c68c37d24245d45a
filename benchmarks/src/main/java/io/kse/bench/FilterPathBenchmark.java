package io.kse.bench;

import io.kse.extender.filter.FilterService;
import io.kse.extender.filter.FilterVerdict;
import io.kse.extender.wire.FilterRequest;
import io.kse.extender.wire.FilterResponse;
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
 * The whole in-process filter path: parse an ExtenderArgs body, decide from the Slurm cache, write
 * the ExtenderFilterResult. The cache holds the pod's placeholder plus 1,000 pending training jobs
 * (a long queue must not slow filter). {@code allocated}: the pod's node passes, the others get a
 * reason; {@code waiting}: every node gets a reason. {@code nodes=1000full} sends full Node objects
 * ({@code nodeCacheCapable: false}).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class FilterPathBenchmark {
  @Param({"100", "1000", "5000", "15000", "1000full"})
  public String nodes;

  @Param({"allocated", "waiting"})
  public String pod;

  private FilterService service;
  private byte[] body;

  @Setup
  public void setUp() {
    boolean full = nodes.endsWith("full");
    int n = Integer.parseInt(nodes.replace("full", ""));
    service = FilterFixture.service(n, pod.equals("allocated"));
    body = FilterFixture.body(n, full);
  }

  @Benchmark
  public byte[] filter() {
    FilterRequest req = FilterRequest.parse(body);
    FilterVerdict v = service.filter(req);
    return FilterResponse.write(req, v.passing(), v.reason(), false);
  }
}
