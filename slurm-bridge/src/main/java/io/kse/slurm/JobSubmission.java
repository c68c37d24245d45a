package io.kse.slurm;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.Set;

/**
 * A placeholder job to submit: what the policy decided, in Slurm's terms, independent of the REST
 * API version. Resources are per node, the way a pod asks for them.
 *
 * @param tag whose placeholder this is (job name and comment)
 * @param partition Slurm partition, empty for the cluster default
 * @param qos QoS, empty for the association default
 * @param account account, empty for the user default
 * @param nodes number of nodes (1 for an ordinary pod)
 * @param cpusPerNode CPUs to reserve on each node
 * @param memoryPerNodeMb memory to reserve on each node, MiB
 * @param gresPerNode generic resources per node, e.g. {@code gpu:h100:4}; empty for none
 * @param timeLimitMinutes time limit; empty for the partition default (unlimited placeholders)
 * @param constraints Slurm feature expression, e.g. {@code [nvl-0|nvl-1]}; empty for none
 * @param excludedNodes nodes the job must not use
 * @param exclusive whether the job takes whole nodes
 * @param reservation reservation name, empty for none
 * @param licenses licenses, e.g. {@code fabric:1}; empty for none
 * @param priority explicit priority (needs an operator token); empty to let Slurm compute it
 * @param nice nice value (any user); empty for none
 * @param hold submit held (released later with an update)
 * @param workingDirectory where the placeholder's batch script runs
 * @param environment environment of the batch script (Slurm requires a non-empty one)
 * @param shape a batch job that sleeps, or (slurmrestd v0.0.44+) a Slurm external job
 * @param maxSwitches at most this many leaf switches (topology/tree; slurmrestd v0.0.41+)
 * @param switchWaitSeconds how long to wait for {@code maxSwitches} before taking more
 * @param segmentSize nodes per segment within one block (topology/block; v0.0.41+)
 */
public record JobSubmission(
    PlaceholderTag tag,
    Optional<String> partition,
    Optional<String> qos,
    Optional<String> account,
    int nodes,
    int cpusPerNode,
    long memoryPerNodeMb,
    Optional<String> gresPerNode,
    OptionalInt timeLimitMinutes,
    Optional<String> constraints,
    Set<String> excludedNodes,
    boolean exclusive,
    Optional<String> reservation,
    Optional<String> licenses,
    OptionalLong priority,
    OptionalInt nice,
    boolean hold,
    String workingDirectory,
    Map<String, String> environment,
    Shape shape,
    OptionalInt maxSwitches,
    OptionalInt switchWaitSeconds,
    OptionalInt segmentSize) {

  /** How the placeholder holds its allocation. */
  public enum Shape {
    /** A batch job whose script sleeps until cancelled: every Slurm version. */
    BATCH,
    /**
     * An allocation without steps ({@code job/allocate} with the {@code EXTERNAL_JOB} flag): no
     * process runs on the node; slurmrestd v0.0.44 (Slurm 25.11) only.
     */
    EXTERNAL
  }

  /**
   * The batch placeholder: it only holds the allocation until it is cancelled. When Slurm preempts
   * it with a GraceTime, the first SIGTERM goes to the job's steps, not to the batch shell
   * (slurm.conf GraceTime; seen live on 22.05: a preempted {@code exec sleep infinity} runs on
   * until its new end time), so it holds its GPUs until the extender cancels it once the pod is
   * gone. It must not ignore SIGTERM: a cancel's SIGTERM ends it at once (the next job started 0.1
   * s after scancel), where ignoring it would keep the node for KillWait (30 s by default) more.
   */
  public static final String PLACEHOLDER_SCRIPT =
      "#!/bin/sh\n# kube-slurm-extender placeholder: holds this allocation for a Kubernetes pod\n"
          + "exec sleep infinity\n";

  public JobSubmission {
    Objects.requireNonNull(tag, "tag");
    if (nodes < 1) {
      throw new InvalidSubmission("nodes must be at least 1, got " + nodes);
    }
    if (cpusPerNode < 1) {
      throw new InvalidSubmission("cpusPerNode must be at least 1, got " + cpusPerNode);
    }
    if (memoryPerNodeMb < 0) {
      throw new InvalidSubmission("memoryPerNodeMb must not be negative");
    }
    excludedNodes = Set.copyOf(excludedNodes);
    environment = Map.copyOf(environment);
    if (environment.isEmpty()) {
      throw new InvalidSubmission("environment must not be empty (Slurm rejects it)");
    }
  }

  /** This submission, held: priority 0 until released (neither scheduler looks at it). */
  public JobSubmission held() {
    return new JobSubmission(
        tag,
        partition,
        qos,
        account,
        nodes,
        cpusPerNode,
        memoryPerNodeMb,
        gresPerNode,
        timeLimitMinutes,
        constraints,
        excludedNodes,
        exclusive,
        reservation,
        licenses,
        priority,
        nice,
        true,
        workingDirectory,
        environment,
        shape,
        maxSwitches,
        switchWaitSeconds,
        segmentSize);
  }

  public static Builder builder(PlaceholderTag tag) {
    return new Builder(tag);
  }

  /** Builder with the defaults a placeholder wants; only the tag is required. */
  public static final class Builder {
    private final PlaceholderTag tag;
    private String partition;
    private String qos;
    private String account;
    private int nodes = 1;
    private int cpusPerNode = 1;
    private long memoryPerNodeMb;
    private String gresPerNode;
    private Integer timeLimitMinutes;
    private String constraints;
    private Set<String> excludedNodes = Set.of();
    private boolean exclusive;
    private String reservation;
    private String licenses;
    private Long priority;
    private Integer nice;
    private boolean hold;
    private String workingDirectory = "/tmp";
    private Map<String, String> environment = Map.of("PATH", "/usr/bin:/bin");
    private Shape shape = Shape.BATCH;

    private Builder(PlaceholderTag tag) {
      this.tag = tag;
    }

    public Builder partition(String v) {
      partition = v;
      return this;
    }

    public Builder qos(String v) {
      qos = v;
      return this;
    }

    public Builder account(String v) {
      account = v;
      return this;
    }

    public Builder nodes(int v) {
      nodes = v;
      return this;
    }

    public Builder cpusPerNode(int v) {
      cpusPerNode = v;
      return this;
    }

    public Builder memoryPerNodeMb(long v) {
      memoryPerNodeMb = v;
      return this;
    }

    public Builder gresPerNode(String v) {
      gresPerNode = v;
      return this;
    }

    public Builder timeLimitMinutes(int v) {
      timeLimitMinutes = v;
      return this;
    }

    public Builder constraints(String v) {
      constraints = v;
      return this;
    }

    public Builder excludedNodes(Set<String> v) {
      excludedNodes = v;
      return this;
    }

    public Builder exclusive(boolean v) {
      exclusive = v;
      return this;
    }

    public Builder reservation(String v) {
      reservation = v;
      return this;
    }

    public Builder licenses(String v) {
      licenses = v;
      return this;
    }

    public Builder priority(long v) {
      priority = v;
      return this;
    }

    public Builder nice(int v) {
      nice = v;
      return this;
    }

    public Builder hold(boolean v) {
      hold = v;
      return this;
    }

    public Builder workingDirectory(String v) {
      workingDirectory = v;
      return this;
    }

    public Builder environment(Map<String, String> v) {
      environment = v;
      return this;
    }

    public Builder shape(Shape v) {
      shape = v;
      return this;
    }

    public JobSubmission build() {
      return new JobSubmission(
          tag,
          nonBlank(partition),
          nonBlank(qos),
          nonBlank(account),
          nodes,
          cpusPerNode,
          memoryPerNodeMb,
          nonBlank(gresPerNode),
          timeLimitMinutes == null ? OptionalInt.empty() : OptionalInt.of(timeLimitMinutes),
          nonBlank(constraints),
          excludedNodes,
          exclusive,
          nonBlank(reservation),
          nonBlank(licenses),
          priority == null ? OptionalLong.empty() : OptionalLong.of(priority),
          nice == null ? OptionalInt.empty() : OptionalInt.of(nice),
          hold,
          workingDirectory,
          environment,
          shape,
          maxSwitches == null ? OptionalInt.empty() : OptionalInt.of(maxSwitches),
          switchWaitSeconds == null ? OptionalInt.empty() : OptionalInt.of(switchWaitSeconds),
          segmentSize == null ? OptionalInt.empty() : OptionalInt.of(segmentSize));
    }

    private Integer maxSwitches;
    private Integer switchWaitSeconds;
    private Integer segmentSize;

    /** At most {@code count} leaf switches, waiting up to {@code waitSeconds} for them. */
    public Builder switches(int count, int waitSeconds) {
      this.maxSwitches = count;
      this.switchWaitSeconds = waitSeconds;
      return this;
    }

    /** Nodes in segments of {@code size} within one topology block. */
    public Builder segmentSize(int size) {
      this.segmentSize = size;
      return this;
    }

    private static Optional<String> nonBlank(String v) {
      return v == null || v.isBlank() ? Optional.empty() : Optional.of(v);
    }
  }

  /** Node names as a sorted list, so request bodies are deterministic. */
  public List<String> excludedNodesSorted() {
    return excludedNodes.stream().sorted().toList();
  }
}
