package io.kse.extender.filter;

import io.kse.extender.k8s.NodeNames;
import io.kse.extender.k8s.PodRef;
import io.kse.extender.lifecycle.PlaceholderRegistry;
import io.kse.extender.lifecycle.PlaceholderState;
import io.kse.extender.lifecycle.Placement;
import io.kse.extender.lifecycle.WhyWaiting;
import io.kse.extender.lifecycle.WokenPodHints;
import io.kse.extender.wire.FilterRequest;
import io.kse.slurm.JobState;
import io.kse.slurm.SlurmJob;
import io.kse.slurm.cache.SlurmView;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.LongConsumer;

/**
 * Decides a filter call from memory only: the Slurm cache, the placeholder registry and the node
 * mapping. It never calls Slurm or the API server; a pod without a placeholder is handed to {@code
 * requestPlaceholder}, which submits asynchronously.
 */
public final class FilterService {
  private final SlurmView slurm;
  private final PlaceholderRegistry registry;
  private final NodeNames nodeNames;
  private final Consumer<PodRef> requestPlaceholder;
  private final Function<PodRef, Placement> placementOf;
  private final LongConsumer lookFor;

  /**
   * @param lookFor asks the cache to read a job a woken pod names and the cache does not know (the
   *     allocation hint's handler: it reads off this thread)
   */
  public FilterService(
      SlurmView slurm,
      PlaceholderRegistry registry,
      NodeNames nodeNames,
      Consumer<PodRef> requestPlaceholder,
      Function<PodRef, Placement> placementOf,
      LongConsumer lookFor) {
    this.slurm = slurm;
    this.registry = registry;
    this.nodeNames = nodeNames;
    this.requestPlaceholder = requestPlaceholder;
    this.placementOf = placementOf;
    this.lookFor = lookFor;
  }

  public FilterVerdict filter(FilterRequest req) {
    PodRef pod = req.pod();
    Placement placement = placementOf.apply(pod);
    Optional<SlurmJob> job = slurm.jobFor(placement.key());
    Optional<PlaceholderState> state = registry.get(placement.key());
    if (state.isPresent() && state.get() instanceof PlaceholderState.Rejected r) {
      return none(
          "kse: rejected by the placement policy: " + r.reason(),
          FilterVerdict.Code.POLICY_REJECTED);
    }
    Optional<Placement.Group> group = placement.group();
    if (group.isPresent() && group.get().problem().isPresent()) {
      return none(
          WhyWaiting.groupInvalid(group.get().id(), group.get().problem().get()),
          FilterVerdict.Code.GROUP_INVALID);
    }
    if (job.isEmpty()) {
      Optional<FilterVerdict> unread = namedButUnread(req);
      if (unread.isPresent()) {
        return unread.get();
      }
    }
    if (job.isEmpty() && group.isPresent()) {
      return state.isPresent()
          ? withoutJob(pod, state)
          : none(
              WhyWaiting.groupIncomplete(
                  group.get().id(), placement.members().size(), placement.size()),
              FilterVerdict.Code.GROUP_INCOMPLETE);
    }
    if (job.isEmpty()) {
      return withoutJob(pod, state);
    }
    SlurmJob j = job.get();
    if (j.isAllocated()) {
      // each member goes to its own node of the allocation, and only there
      Optional<String> node = placement.nodeOf(pod, j);
      if (node.isEmpty()) {
        return none(
            "kse: Slurm job "
                + j.id()
                + " holds no node for this pod as the placement is now (see its "
                + "kse.io/SlurmAllocated condition); a placeholder of the new shape follows",
            FilterVerdict.Code.NO_NODE_FOR_MEMBER);
      }
      String allocated = nodeNames.kubernetes(node.get());
      if (!req.nodeNames().contains(allocated)) {
        return none(
            "kse: Slurm allocated "
                + allocated
                + " to this pod, which is not"
                + " among the candidate nodes",
            FilterVerdict.Code.ALLOCATED_ELSEWHERE);
      }
      return new FilterVerdict(
          List.of(allocated),
          "kse: Slurm allocated " + allocated + " to this pod",
          FilterVerdict.Code.ALLOCATED);
    }
    if (j.state().isFinal()) {
      // the placeholder ended before the pod was bound (preempted, cancelled…): submit anew
      requestPlaceholder.accept(pod);
      return none(
          "kse: Slurm job "
              + j.id()
              + " ended ("
              + j.state()
              + ") before the pod was bound;"
              + " submitting a new placeholder",
          FilterVerdict.Code.JOB_ENDED);
    }
    if (j.state() == JobState.PENDING) {
      return none(WhyWaiting.slurmPending(j.id(), j.stateReason()), FilterVerdict.Code.PENDING);
    }
    return none("kse: Slurm job " + j.id() + " is " + j.state(), FilterVerdict.Code.NOT_RUNNING);
  }

  /**
   * The pod was woken for a job (its {@code kse.io/slurm-job}) this replica has not read yet:
   * another replica, the writer, submitted it, and this one missed Slurm's hint or has not finished
   * reading it. The job is looked for (off this thread) and kube-scheduler asked to retry, which it
   * does after its backoff: a rejection would leave the pod unschedulable until some other event,
   * and the wake-up was the pod's last (a 60-minute soak left one 104 s). Only while the cache
   * looks: once it has read the job — ours, or not and dropped — or Slurm has twice not had it,
   * filter decides as always.
   */
  private Optional<FilterVerdict> namedButUnread(FilterRequest req) {
    java.util.OptionalLong named = WokenPodHints.namedJob(req.annotations());
    if (named.isEmpty()) {
      return Optional.empty();
    }
    long id = named.getAsLong();
    if (slurm.worthLookingFor(id)) {
      lookFor.accept(id);
    }
    return slurm.lookingFor(id)
        ? Optional.of(
            none(
                "kse: the pod was woken for Slurm job "
                    + id
                    + ", which this replica is still reading; retry",
                FilterVerdict.Code.JOB_NOT_READ_YET))
        : Optional.empty();
  }

  private FilterVerdict withoutJob(PodRef pod, Optional<PlaceholderState> state) {
    if (state.isPresent() && state.get() instanceof PlaceholderState.Submitted s) {
      // submitted, the cache has not seen it yet
      return none(WhyWaiting.submitted(s.jobId()), FilterVerdict.Code.PENDING);
    }
    if (state.isPresent() && state.get() instanceof PlaceholderState.SubmitFailed f) {
      requestPlaceholder.accept(pod); // retried once its backoff has passed
      return none(WhyWaiting.submitFailed(f.reason()), FilterVerdict.Code.SUBMIT_FAILED);
    }
    requestPlaceholder.accept(pod);
    return none(
        "kse: waiting for the Slurm placeholder to be submitted", FilterVerdict.Code.NOT_SUBMITTED);
  }

  /** Why the pod waits, as its condition says it. */
  private static FilterVerdict none(WhyWaiting why, FilterVerdict.Code code) {
    return none(why.filterReason(), code);
  }

  private static FilterVerdict none(String reason, FilterVerdict.Code code) {
    return new FilterVerdict(List.of(), reason, code);
  }
}
