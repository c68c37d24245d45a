package io.kse.bench;

import io.kse.extender.filter.FilterService;
import io.kse.extender.k8s.NodeNames;
import io.kse.extender.lifecycle.PlaceholderRegistry;
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

/** The filter path's inputs shared by the JMH benchmark and the HTTP load generator. */
public final class FilterFixture {
  static final String UID = "6f1c2d3e-0000-4000-8000-000000000001";

  private FilterFixture() {}

  /**
   * The filter service over a Slurm cache holding 1,000 pending training jobs and the pod's
   * placeholder, RUNNING on the middle node when {@code allocated}, else pending.
   */
  public static FilterService service(int n, boolean allocated) {
    return new FilterService(
        cache(n, allocated),
        new PlaceholderRegistry(),
        new NodeNames(),
        p -> {},
        io.kse.extender.lifecycle.Placement::of,
        jobId -> {}); // every job the benchmark names is in the cache
  }

  /** The Slurm cache behind {@link #service}. */
  public static SlurmStateCache cache(int n, boolean allocated) {
    String uid = UID;
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
    return cache;
  }

  /** An ExtenderArgs body for pod serving/llm-0 with {@code n} node names or full Node objects. */
  public static byte[] body(int n, boolean full) {
    String uid = UID;
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
    return b.toString().getBytes(StandardCharsets.UTF_8);
  }
}
