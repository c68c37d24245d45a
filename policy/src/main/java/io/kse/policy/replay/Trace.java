package io.kse.policy.replay;

import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A period of a cluster's work, to replay against a candidate policy: the inference pods (or
 * groups) that arrived and how long they were wanted, and the Slurm jobs of everyone else. Times
 * are offsets from the trace's start, so a trace replays the same at any date and any speed.
 *
 * <p>On disk: JSON lines ({@link TraceCodec}), one header line then one line per event, ordered by
 * {@code at}; docs/policy-guide.md "Replay" documents the schema.
 */
public record Trace(Header header, List<Inference> inference, List<SlurmJob> slurmJobs) {
  public static final int VERSION = 1;

  public Trace {
    inference = inference.stream().sorted(Comparator.comparing(Inference::at)).toList();
    slurmJobs = slurmJobs.stream().sorted(Comparator.comparing(SlurmJob::at)).toList();
  }

  /**
   * What the trace is of.
   *
   * @param start when the period began (informative: replay uses offsets)
   * @param length the period's length; events lie within it
   * @param source where it came from, e.g. {@code synthetic}, {@code e2e}, {@code recorded}
   * @param seed the generator's seed for a synthetic trace
   */
  public record Header(
      int version, Instant start, Duration length, String source, Optional<Long> seed) {}

  /**
   * An inference pod, or a group of {@code nodes} pods placed together, as the extender saw it
   * arrive; {@code lifetime} is how long it was wanted (a replay deletes it then, if it ever ran).
   */
  public record Inference(
      Duration at,
      String id,
      String namespace,
      Map<String, String> labels,
      Map<String, String> annotations,
      Optional<String> priorityClassName,
      long gpus,
      int nodes,
      Duration lifetime) {
    public Inference {
      labels = Map.copyOf(labels);
      annotations = Map.copyOf(annotations);
    }
  }

  /**
   * Another user's Slurm job: submitted at {@code at}, running {@code runtime} once started (a
   * requeued job runs it again from the beginning, as a restarted training step would).
   */
  public record SlurmJob(
      Duration at,
      String id,
      String user,
      String account,
      String partition,
      Optional<String> qos,
      int nodes,
      int gpusPerNode,
      Duration runtime,
      boolean requeue) {}
}
