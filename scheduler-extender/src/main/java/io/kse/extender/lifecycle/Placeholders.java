package io.kse.extender.lifecycle;

import io.kse.extender.k8s.PodRef;
import io.kse.policy.JobSpec;
import io.kse.policy.TopologyRequest;
import io.kse.slurm.JobSubmission;
import io.kse.slurm.PlaceholderTag;
import java.util.Map;

/** The policy's job spec in the bridge's terms. */
public final class Placeholders {
  private Placeholders() {}

  public static JobSubmission toSubmission(
      PodRef pod, JobSpec spec, String workDir, JobSubmission.Shape shape) {
    return toSubmission(
        new PlaceholderTag(pod.namespace(), pod.name(), pod.uid()), spec, workDir, shape);
  }

  public static JobSubmission toSubmission(
      PlaceholderTag tag, JobSpec spec, String workDir, JobSubmission.Shape shape) {
    return toSubmission(tag, spec, workDir, shape, java.util.Set.of());
  }

  /** As above, never on the Slurm nodes {@code avoid} (slurmrestd v0.0.41+: excluded_nodes). */
  public static JobSubmission toSubmission(
      PlaceholderTag tag,
      JobSpec spec,
      String workDir,
      JobSubmission.Shape shape,
      java.util.Set<String> avoid) {
    JobSubmission.Builder b =
        JobSubmission.builder(tag)
            .nodes(spec.nodes())
            .cpusPerNode(spec.cpusPerNode())
            .memoryPerNodeMb(spec.memoryPerNodeMb())
            .exclusive(spec.exclusive())
            .workingDirectory(workDir)
            .environment(
                Map.of(
                    "PATH",
                    "/usr/bin:/bin",
                    "KSE_POD",
                    tag.namespace() + "/" + tag.group().orElse(tag.name())))
            .shape(shape)
            .excludedNodes(avoid);
    spec.partition().ifPresent(b::partition);
    spec.qos().ifPresent(b::qos);
    spec.account().ifPresent(b::account);
    spec.gresPerNode().ifPresent(b::gresPerNode);
    spec.timeLimitMinutes().ifPresent(b::timeLimitMinutes);
    spec.constraint().ifPresent(b::constraints);
    spec.reservation().ifPresent(b::reservation);
    spec.licenses().ifPresent(b::licenses);
    spec.priority().ifPresent(b::priority);
    spec.nice().ifPresent(b::nice);
    if (spec.topology() instanceof TopologyRequest.Switches sw) {
      b.switches(sw.count(), (int) Math.min(Integer.MAX_VALUE, sw.maxWait().getSeconds()));
    } else if (spec.topology() instanceof TopologyRequest.Segment seg) {
      b.segmentSize(seg.size());
    }
    return b.build();
  }
}
