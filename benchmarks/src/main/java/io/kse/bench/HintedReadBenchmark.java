package io.kse.bench;

import io.kse.slurm.ForwardingSlurmClient;
import io.kse.slurm.JobState;
import io.kse.slurm.PlaceholderTag;
import io.kse.slurm.SlurmClient;
import io.kse.slurm.SlurmJob;
import io.kse.slurm.cache.SlurmStateCache;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
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
 * What publishing one hint's read costs the cache when it already holds {@code placeholders} of
 * ours — mostly ended ones, kept until Slurm purges them (MinJobAge: a burst's pods of the last
 * five minutes). Each read finds the hinted job changed, so each publishes a snapshot. Run with the
 * Deployment's compiler flags. Issue 47: a burst's per-pod work must not grow with the cache.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(
    value = 1,
    jvmArgsAppend = {"-XX:TieredStopAtLevel=1", "-XX:CompileThresholdScaling=0.1"})
public class HintedReadBenchmark {
  @Param({"200", "2000", "10000"})
  public int placeholders;

  private SlurmStateCache cache;
  private long hinted;

  @Setup
  public void setUp() {
    Instant now = Instant.now();
    List<SlurmJob> jobs = new ArrayList<>();
    for (int i = 1; i <= placeholders; i++) {
      jobs.add(job(i, i == placeholders ? JobState.RUNNING : JobState.COMPLETED, "None", now));
    }
    hinted = placeholders;
    SlurmClient listed = new StaticSlurmClient(jobs);
    SlurmClient flipping =
        new ForwardingSlurmClient() {
          private boolean prolog;

          @Override
          protected SlurmClient delegate() {
            return listed;
          }

          @Override
          public Optional<SlurmJob> job(long jobId) {
            prolog = !prolog; // a change every read: every read publishes
            return Optional.of(
                HintedReadBenchmark.job(jobId, JobState.RUNNING, prolog ? "Prolog" : "None", now));
          }
        };
    cache =
        new SlurmStateCache(
            flipping,
            Duration.ofSeconds(1),
            Duration.ofSeconds(30),
            Clock.systemUTC(),
            new SimpleMeterRegistry());
    cache.pollOnce();
  }

  @Benchmark
  public Optional<SlurmJob> hintedRead() {
    return cache.refreshJob(hinted);
  }

  private static SlurmJob job(long id, JobState state, String reason, Instant now) {
    return new SlurmJob(
        id,
        "kse-p-" + id,
        new PlaceholderTag("serving", "p-" + id, "uid-" + id).toComment(),
        state,
        reason,
        "inference",
        "",
        state == JobState.RUNNING ? List.of("gpu-node-0") : List.of(),
        1,
        now,
        Optional.of(now),
        Optional.empty(),
        0,
        "gres:gpu:h100:1",
        "",
        1,
        now);
  }
}
