package io.kse.extender.filter;

import io.kse.extender.k8s.NodeNames;
import io.kse.extender.k8s.PodActions;
import io.kse.extender.k8s.PodBinder;
import io.kse.extender.k8s.WellKnown;
import io.kse.extender.wire.PodRef;
import io.kse.slurm.SlurmJob;
import io.kse.slurm.cache.SlurmStateCache;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The bind verb: binds only to a node Slurm allocated to this very pod (by UID), never waits on
 * Slurm, and is idempotent (a retried bind to the same node succeeds).
 */
public final class BindService {
  private static final Logger LOG = LoggerFactory.getLogger(BindService.class);

  private final SlurmStateCache slurm;
  private final NodeNames nodeNames;
  private final PodBinder binder;
  private final PodActions actions;
  private final java.util.function.Consumer<PodRef> onPodGone;
  private final java.util.function.Consumer<PodRef> onBound;

  public BindService(
      SlurmStateCache slurm,
      NodeNames nodeNames,
      PodBinder binder,
      PodActions actions,
      java.util.function.Consumer<PodRef> onPodGone,
      java.util.function.Consumer<PodRef> onBound) {
    this.slurm = slurm;
    this.nodeNames = nodeNames;
    this.binder = binder;
    this.actions = actions;
    this.onPodGone = onPodGone;
    this.onBound = onBound;
  }

  /** Returns the {@code Error} text for kube-scheduler: empty on success. */
  public String bind(PodRef pod, String node) {
    Optional<SlurmJob> job = slurm.jobForPod(pod.uid());
    boolean allocatedHere =
        job.map(
                j ->
                    j.isAllocated()
                        && j.nodes().stream().map(nodeNames::kubernetes).anyMatch(node::equals))
            .orElse(false);
    if (!allocatedHere) {
      String why =
          job.map(j -> "Slurm job " + j.id() + " is " + j.state() + " on " + j.nodes())
              .orElse("no Slurm placeholder job is known for this pod");
      LOG.info("bind_refused pod={} uid={} node={} reason=\"{}\"", pod, pod.uid(), node, why);
      return "kse: refusing to bind " + pod + " to " + node + ": " + why;
    }
    long jobId = job.get().id();
    PodBinder.Outcome o = binder.bind(pod, node);
    LOG.info(
        "bind pod={} uid={} node={} slurmJob={} result={}",
        pod,
        pod.uid(),
        node,
        jobId,
        o.result());
    if (o.ok()) {
      if (o.result() == PodBinder.Result.BOUND) {
        actions.event(
            pod, false, WellKnown.BOUND, "bound to " + node + ", allocated by Slurm job " + jobId);
        onBound.accept(pod);
      }
      return "";
    }
    if (o.result() == PodBinder.Result.POD_GONE || o.result() == PodBinder.Result.UID_MISMATCH) {
      onPodGone.accept(pod); // its placeholder must not outlive it
    } else {
      actions.event(
          pod, true, WellKnown.BIND_FAILED, "binding to " + node + " failed: " + o.message());
    }
    return "kse: " + o.message();
  }
}
