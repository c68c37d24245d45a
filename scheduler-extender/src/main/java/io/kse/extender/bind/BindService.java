package io.kse.extender.bind;

import io.kse.extender.dra.ClaimProblem;
import io.kse.extender.dra.GpuClaims;
import io.kse.extender.k8s.EventReason;
import io.kse.extender.k8s.NodeNames;
import io.kse.extender.k8s.PodActions;
import io.kse.extender.k8s.PodBinder;
import io.kse.extender.k8s.PodRef;
import io.kse.extender.k8s.PodSource;
import io.kse.extender.lifecycle.Placement;
import io.kse.extender.log.Untrusted;
import io.kse.slurm.SlurmJob;
import io.kse.slurm.cache.SlurmView;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The bind verb: binds only a pod the extender itself knows (its informer holds that UID under that
 * name), only to a node Slurm allocated to that very pod, never waits on Slurm, and is idempotent
 * (a retried bind to the same node succeeds). A caller's arguments are a claim to check, never a
 * reason to act: whatever the API server answers, nothing here cancels or evicts anything. A pod
 * that is gone is noticed by the informer, which releases its placeholder.
 */
public final class BindService {
  private static final Logger LOG = LoggerFactory.getLogger(BindService.class);

  private final SlurmView slurm;
  private final PodSource pods;
  private final NodeNames nodeNames;
  private final PodBinder binder;
  private final PodActions actions;
  private final Consumer<PodRef> onBound;
  private final Function<PodRef, Placement> placementOf;
  private final GpuClaims gpuClaims;

  public BindService(
      SlurmView slurm,
      PodSource pods,
      NodeNames nodeNames,
      PodBinder binder,
      PodActions actions,
      Consumer<PodRef> onBound,
      Function<PodRef, Placement> placementOf,
      GpuClaims gpuClaims) {
    this.gpuClaims = gpuClaims;
    this.placementOf = placementOf;
    this.slurm = slurm;
    this.pods = pods;
    this.nodeNames = nodeNames;
    this.binder = binder;
    this.actions = actions;
    this.onBound = onBound;
  }

  /** Returns the {@code Error} text for kube-scheduler: empty on success. */
  public String bind(PodRef pod, String node) {
    if (pods.pod(pod).isEmpty()) {
      LOG.info(
          "bind_refused pod=\"{}\" uid=\"{}\" node=\"{}\" reason=\"no such pod of this scheduler\"",
          Untrusted.text(pod.toString()),
          Untrusted.text(pod.uid()),
          Untrusted.text(node));
      return "kse: refusing to bind: no pod of this scheduler named "
          + pod
          + " with UID "
          + pod.uid()
          + " is known";
    }
    // from here on the claim is verified: the informer holds exactly this namespace, name and UID
    Placement placement = placementOf.apply(pod);
    Optional<SlurmJob> job = slurm.jobFor(placement.key());
    // a member goes to its own node of the allocation only (the one rule: Placement.nodeOf)
    boolean allocatedHere =
        job.flatMap(j -> placement.nodeOf(pod, j))
            .map(n -> node.equals(nodeNames.kubernetes(n)))
            .orElse(false);
    if (!allocatedHere) {
      String why =
          job.map(j -> "Slurm job " + j.id() + " is " + j.state() + " on " + j.nodes())
              .orElse("no Slurm placeholder job is known for this pod");
      LOG.info(
          "bind_refused pod={} uid={} node=\"{}\" reason=\"{}\"",
          pod,
          pod.uid(),
          Untrusted.text(node),
          why);
      return "kse: refusing to bind " + pod + " to " + node + ": " + why;
    }
    long jobId = job.get().id();
    Optional<String> claimsRefused = allocateClaims(pod, node, job.get());
    if (claimsRefused.isPresent()) {
      return "kse: " + claimsRefused.get();
    }
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
            pod, EventReason.BOUND, "bound to " + node + ", allocated by Slurm job " + jobId);
        onBound.accept(pod);
      }
      return "";
    }
    if (o.result() != PodBinder.Result.POD_GONE && o.result() != PodBinder.Result.UID_MISMATCH) {
      actions.event(pod, EventReason.BIND_FAILED, "binding to " + node + " failed: " + o.message());
    }
    return "kse: " + o.message();
  }

  /**
   * A pod with ResourceClaims gets exactly the GPUs Slurm gave its placeholder on this node,
   * written into its claims before the Binding (the kubelet starts it only with allocated claims).
   * Returns why it cannot, if so.
   */
  private Optional<String> allocateClaims(PodRef ref, String node, SlurmJob job) {
    Optional<io.fabric8.kubernetes.api.model.Pod> pod = pods.pod(ref);
    if (pod.isEmpty() || !GpuClaims.hasClaims(pod.get())) {
      return Optional.empty();
    }
    String slurmNode =
        job.nodes().stream()
            .filter(n -> nodeNames.kubernetes(n).equals(node))
            .findFirst()
            .orElse(node);
    // whether the claims get a share or whole GPUs follows what Slurm holds for the placeholder,
    // which the cache has: no API read of the claims before the one that allocates them
    Optional<io.kse.slurm.GpuShards> shards = job.shardsOn(slurmNode);
    if (shards.isPresent()) {
      return allocateShare(ref, pod.get(), node, slurmNode, job, shards.get());
    }
    String why;
    try {
      java.util.List<Integer> indices =
          job.gpuIndicesOn(slurmNode)
              .orElseThrow(
                  () ->
                      new ClaimProblem(
                          "Slurm did not say which GPUs job "
                              + job.id()
                              + " holds on "
                              + slurmNode
                              + " (gres_detail has no IDX: GPUs in gres.conf need File=)"));
      String allocated = gpuClaims.allocate(pod.get(), node, indices);
      LOG.info(
          "claims_allocated pod={} uid={} node={} slurmJob={} gpuIndices={} claims=\"{}\"",
          ref,
          ref.uid(),
          node,
          job.id(),
          indices,
          allocated);
      actions.event(
          ref,
          EventReason.GPUS_ALLOCATED,
          "ResourceClaims allocated the GPUs Slurm job "
              + job.id()
              + " holds on "
              + node
              + " (indices "
              + indices
              + "): "
              + allocated);
      return Optional.empty();
    } catch (ClaimProblem e) {
      why = e.getMessage();
    }
    return refused(ref, node, job, why);
  }

  /**
   * A pod asking shares of a GPU gets them on the one GPU Slurm put its placeholder's shards on
   * (issue 46): two pods share a GPU only where Slurm put both their shards.
   */
  private Optional<String> allocateShare(
      PodRef ref,
      io.fabric8.kubernetes.api.model.Pod pod,
      String node,
      String slurmNode,
      SlurmJob job,
      io.kse.slurm.GpuShards held) {
    String why;
    try {
      int gpu =
          held.gpu()
              .orElseThrow(
                  () ->
                      new ClaimProblem(
                          "Slurm put job "
                              + job.id()
                              + "'s shards on several GPUs of "
                              + slurmNode
                              + " "
                              + held.byGpu()
                              + "; a claim's share is of one GPU"));
      long shares = held.total();
      String allocated = gpuClaims.allocateShare(pod, node, gpu, shares);
      LOG.info(
          "claims_allocated pod={} uid={} node={} slurmJob={} gpuIndex={} shares={} claims=\"{}\"",
          ref,
          ref.uid(),
          node,
          job.id(),
          gpu,
          shares,
          allocated);
      actions.event(
          ref,
          EventReason.GPUS_ALLOCATED,
          "ResourceClaims allocated "
              + shares
              + " share(s) of the GPU with index "
              + gpu
              + " on "
              + node
              + ", where Slurm job "
              + job.id()
              + " holds its shards: "
              + allocated);
      return Optional.empty();
    } catch (ClaimProblem e) {
      why = e.getMessage();
    }
    return refused(ref, node, job, why);
  }

  private Optional<String> refused(PodRef ref, String node, SlurmJob job, String why) {
    LOG.info(
        "bind_refused pod={} uid={} node={} slurmJob={} reason=\"{}\"",
        ref,
        ref.uid(),
        node,
        job.id(),
        Untrusted.text(why));
    actions.event(ref, EventReason.BIND_FAILED, "cannot allocate the pod's GPUs: " + why);
    return Optional.of("cannot allocate the GPUs of " + ref + ": " + why);
  }
}
