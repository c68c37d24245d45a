package io.kse.slurm;

import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * A job as Slurm reports it, reduced to what the extender needs.
 *
 * @param nodes the nodes allocated to the job (empty while pending)
 * @param stateReason Slurm's reason, e.g. {@code Resources}, {@code Priority}, {@code BeginTime}
 * @param restartCount how many times the job was requeued (a preempted job increments it)
 * @param tresPerNode GRES per node, e.g. {@code gres:gpu:h100:4}
 * @param lastChange the latest of submit/start/end/preempt times Slurm reported
 */
public record SlurmJob(
    long id,
    String name,
    String comment,
    JobState state,
    String stateReason,
    String partition,
    String qos,
    List<String> nodes,
    int nodeCount,
    Instant submitTime,
    Optional<Instant> startTime,
    Optional<Instant> endTime,
    int restartCount,
    String tresPerNode,
    String features,
    long priority,
    Instant lastChange) {

  public SlurmJob {
    nodes = List.copyOf(nodes);
  }

  /** The placeholder tag in the comment, if this job is one of ours. */
  public Optional<PlaceholderTag> placeholder() {
    return PlaceholderTag.fromComment(comment);
  }

  private static final java.util.regex.Pattern GPUS =
      java.util.regex.Pattern.compile("gpu(?::[^:,/]+)?:(\\d+)");

  /**
   * GPUs per node from {@code tres_per_node} ({@code gres:gpu:h100:8}, {@code gres/gpu:8}); 0 if
   * none.
   */
  public int gpusPerNode() {
    java.util.regex.Matcher m = GPUS.matcher(tresPerNode);
    return m.find() ? Integer.parseInt(m.group(1)) : 0;
  }

  /** True when the job is running and its nodes are known. */
  public boolean isAllocated() {
    return state == JobState.RUNNING && !nodes.isEmpty();
  }
}
