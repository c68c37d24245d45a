package io.kse.slurm;

import io.kse.policy.JobSpec;
import io.kse.policy.TopologyRequest;
import java.util.Map;
import java.util.Set;

/**
 * The policy's placeholder job in the bridge's terms: the one translation the extender submits
 * through and a policy replay submits through, so a replay tests what production would send.
 */
public final class PlaceholderJobs {
  private PlaceholderJobs() {}

  /** The submission of {@code spec} for {@code tag}, never on the Slurm nodes {@code avoid}. */
  public static JobSubmission of(
      PlaceholderTag tag,
      JobSpec spec,
      String workDir,
      JobSubmission.Shape shape,
      Set<String> avoid) {
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
