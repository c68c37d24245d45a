package io.kse.bench;

import io.kse.extender.filter.FilterService;
import io.kse.extender.filter.FilterVerdict;
import io.kse.extender.k8s.NodeNames;
import io.kse.extender.lifecycle.PlaceholderRegistry;
import io.kse.extender.wire.FilterRequest;
import io.kse.extender.wire.FilterResponse;
import io.kse.slurm.JobState;
import io.kse.slurm.PlaceholderTag;
import io.kse.slurm.SlurmJob;
import io.kse.slurm.cache.SlurmStateCache;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
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
    String uid = "6f1c2d3e-0000-4000-8000-000000000001";
    List<SlurmJob> jobs = new ArrayList<>();
    Instant now = Instant.now();
    for (int i = 0; i < 1000; i++) {
      jobs.add(
          new SlurmJob(
              10_000 + i,
              "train-" + i,
              "",
              JobState.PENDING,
              "Priority",
              "training",
              "",
              List.of(),
              4,
              now,
              Optional.empty(),
              Optional.empty(),
              0,
              "gres:gpu:h100:8",
              "",
              1,
              now));
    }
    boolean allocated = pod.equals("allocated");
    jobs.add(
        new SlurmJob(
            42,
            "kse-serving-llm-0",
            new PlaceholderTag("serving", "llm-0", uid).toComment(),
            allocated ? JobState.RUNNING : JobState.PENDING,
            allocated ? "None" : "Resources",
            "inference",
            "",
            allocated ? List.of("gpu-node-" + (n / 2)) : List.of(),
            1,
            now,
            Optional.of(now),
            Optional.empty(),
            0,
            "gres:gpu:h100:4",
            "",
            10000,
            now));
    SlurmStateCache cache =
        new SlurmStateCache(
            new StaticSlurmClient(jobs),
            Duration.ofSeconds(1),
            Duration.ofSeconds(30),
            Clock.systemUTC(),
            new SimpleMeterRegistry());
    cache.pollOnce();
    service = new FilterService(cache, new PlaceholderRegistry(), new NodeNames(), p -> {});

    StringBuilder b = new StringBuilder(64 * n + 2048);
    b.append("{\"Pod\":{\"metadata\":{\"name\":\"llm-0\",\"namespace\":\"serving\",\"uid\":\"")
        .append(uid)
        .append(
            "\",\"labels\":{\"serving.knative.dev/service\":\"llm\"},\"annotations\":{\"kse.io/topology\":\"nvlink-domain\"}},")
        .append(
            "\"spec\":{\"schedulerName\":\"slurm-inference\",\"priority\":100000,\"containers\":[{\"name\":\"server\",")
        .append(
            "\"image\":\"llm:1\",\"resources\":{\"requests\":{\"cpu\":\"4\",\"nvidia.com/gpu\":\"4\"}}},")
        .append(
            "{\"name\":\"queue-proxy\",\"image\":\"q:1\"}]},\"status\":{\"phase\":\"Pending\"}},");
    if (full) {
      b.append("\"Nodes\":{\"metadata\":{},\"items\":[");
      for (int i = 0; i < n; i++) {
        b.append(i == 0 ? "" : ",")
            .append("{\"metadata\":{\"name\":\"gpu-node-")
            .append(i)
            .append("\",\"labels\":{\"kubernetes.io/hostname\":\"gpu-node-")
            .append(i)
            .append("\",\"kse.io/nvlink-domain\":\"nvl-")
            .append(i / 4)
            .append("\"}},\"status\":{\"capacity\":")
            .append(
                "{\"cpu\":\"192\",\"memory\":\"2Ti\",\"nvidia.com/gpu\":\"8\"},\"allocatable\":{\"cpu\":\"190\",")
            .append("\"memory\":\"2000Gi\",\"nvidia.com/gpu\":\"8\"}}}");
      }
      b.append("]},\"NodeNames\":null}");
    } else {
      b.append("\"Nodes\":null,\"NodeNames\":[");
      for (int i = 0; i < n; i++) {
        b.append(i == 0 ? "\"" : ",\"").append("gpu-node-").append(i).append('"');
      }
      b.append("]}");
    }
    body = b.toString().getBytes(StandardCharsets.UTF_8);
  }

  @Benchmark
  public byte[] filter() {
    FilterRequest req = FilterRequest.parse(body);
    FilterVerdict v = service.filter(req);
    return FilterResponse.write(req, v.passing(), v.reason(), false);
  }
}
