package io.kse.extender.lifecycle;

import io.fabric8.kubernetes.api.model.Pod;
import io.kse.extender.k8s.NodeNames;
import io.kse.extender.k8s.PodRef;
import io.kse.extender.k8s.WellKnown;
import io.kse.extender.lifecycle.PlacementFacts.PodStanding;
import io.kse.slurm.SlurmJob;
import io.kse.slurm.SlurmNode;
import io.kse.slurm.SubmissionOrder;
import io.kse.slurm.cache.SlurmView;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * Gathers what is true now for a placement — its pods as the informer has them, its job as the
 * Slurm cache has it, its nodes, what the extender has in flight — into {@link PlacementFacts}. It
 * changes nothing. Besides facts it words the few that are only ever shown as they are (why a node
 * is not usable, where a group's domains are): what users are told is otherwise the rules'.
 */
final class PlacementObserver {
  /** A job Slurm accepted but the cache never showed: stop waiting for it after this. */
  static final Duration SUBMIT_VISIBLE_WITHIN = Duration.ofSeconds(60);

  /** How long past its deletion deadline a bound pod may stay Terminating before users are told. */
  static final Duration STUCK_TERMINATING = Duration.ofSeconds(60);

  private final SlurmView cache;
  private final PlaceholderRegistry registry;
  private final NodeNames nodeNames;
  private final NodeStanding standing;
  private final Clock clock;
  private final Duration groupIncompleteWait;
  private final PodFactsReader podFacts;
  private final WakeMemo woken;

  private final SubmissionOrder order;

  /**
   * @param groupIncompleteWait how long a group may lack members before its pods are told so
   * @param order the queue placeholders wait in: whom a pending one waits behind
   */
  PlacementObserver(
      PlacementReconciler.Views v,
      Clock clock,
      Duration groupIncompleteWait,
      NodeStanding standing,
      PodFactsReader podFacts,
      WakeMemo woken,
      SubmissionOrder order) {
    this.order = order;
    this.cache = v.cache();
    this.registry = v.registry();
    this.nodeNames = v.nodeNames();
    this.standing = standing;
    this.clock = clock;
    this.groupIncompleteWait = groupIncompleteWait;
    this.podFacts = podFacts;
    this.woken = woken;
  }

  /** What is true now for the placement whose pods the informer holds as {@code pods} (by UID). */
  PlacementFacts facts(Placement placement, Map<String, Optional<Pod>> pods) {
    Optional<SlurmJob> job = cache.jobFor(placement.key());
    Optional<PlaceholderState> own = registry.get(placement.key());
    Optional<Long> notSeen = Optional.empty();
    boolean retryDue = false;
    Instant now = clock.instant();
    if (own.orElse(null) instanceof PlaceholderState.Submitted s
        && cache.job(s.jobId()).isEmpty()
        && now.isBefore(s.at().plus(SUBMIT_VISIBLE_WITHIN))) {
      notSeen = Optional.of(s.jobId());
    }
    if (own.orElse(null) instanceof PlaceholderState.SubmitFailed f) {
      retryDue = !now.isBefore(f.retryAt());
    }
    List<PlacementFacts.Member> members = new ArrayList<>();
    Instant oldest = now;
    for (Placement.Slot slot : placement.members()) {
      PodRef m = slot.ref();
      Optional<Pod> pod = pods.get(m.uid());
      long wokenFor = woken.jobOf(m.uid());
      members.add(
          new PlacementFacts.Member(
              m,
              PodStanding.of(pod),
              pod.map(p -> p.getSpec().getNodeName()).orElse(""),
              slot.index(),
              job.map(j -> j.id() == wokenFor).orElse(false),
              pod.flatMap(PlacementObserver::deletionDeadline)
                  .map(d -> now.isAfter(d.plus(STUCK_TERMINATING)))
                  .orElse(false),
              slot.gpus()));
      Optional<Instant> created = pod.flatMap(PlacementObserver::created);
      if (created.isPresent() && created.get().isBefore(oldest)) {
        oldest = created.get();
      }
    }
    return new PlacementFacts(
        members,
        placement.size(),
        placement.group(),
        !now.isBefore(oldest.plus(groupIncompleteWait)),
        job,
        own,
        notSeen,
        unusableNode(placement, pods, job),
        retryDue,
        cache.duplicatesOf(placement.key()),
        failedNodes(members),
        job.filter(j -> j.state() == io.kse.slurm.JobState.PENDING)
            .map(j -> order.leader(j.partition(), j.id()))
            .orElse(java.util.OptionalLong.empty()));
  }

  /** The bound members' nodes Slurm has unavailable, in Slurm's words (a map lookup each). */
  private Map<String, String> failedNodes(List<PlacementFacts.Member> members) {
    Map<String, String> failed = new java.util.HashMap<>();
    for (PlacementFacts.Member m : members) {
      if (!m.boundNode().isEmpty()) {
        cache
            .node(nodeNames.slurm(m.boundNode()))
            .filter(SlurmNode::isUnavailable)
            .ifPresent(n -> failed.put(m.boundNode(), inSlurmsWords(n)));
      }
    }
    return failed;
  }

  /** e.g. "gpu-node-4 is down in Slurm (Not responding)". */
  static String inSlurmsWords(SlurmNode n) {
    return n.name()
        + " is "
        + n.unavailableAs()
        + " in Slurm"
        + (n.reason().isBlank() ? "" : " (" + n.reason() + ")");
  }

  /** Why a node Slurm allocated cannot take its member now, if one cannot. */
  private Optional<String> unusableNode(
      Placement placement, Map<String, Optional<Pod>> pods, Optional<SlurmJob> job) {
    // only a member still to be bound can be sent elsewhere: skip the node lookups otherwise
    boolean pending =
        pods.values().stream().anyMatch(p -> PodStanding.of(p) == PodStanding.PENDING);
    if (!pending || !job.map(SlurmJob::isAllocated).orElse(false)) {
      return Optional.empty();
    }
    Optional<String> unusable =
        job.get().nodes().stream()
            .map(n -> standing.unusable(nodeNames.kubernetes(n)))
            .flatMap(Optional::stream)
            .findFirst();
    if (unusable.isEmpty()
        && placement.group().map(Placement.Group::exclusiveTopology).orElse(false)) {
      unusable = standing.sharedDomain(placement.key(), job.get());
    }
    return unusable;
  }

  /**
   * What is known of a group's members beyond their metadata: the seat each holds in the group's
   * current job (the node it is bound to, or was sent to — by its annotations, or by a wake-up the
   * informer has not shown yet), and the GPUs each asks.
   */
  Placement.MemberView members(String key) {
    Optional<SlurmJob> job = cache.jobFor(key).filter(SlurmJob::isAllocated);
    return new Placement.MemberView() {
      @Override
      public OptionalInt seat(Pod pod) {
        return job.isEmpty() ? OptionalInt.empty() : seatIn(job.get(), pod);
      }

      @Override
      public long gpus(Pod pod) {
        return podFacts.gpus(pod);
      }
    };
  }

  private OptionalInt seatIn(SlurmJob job, Pod pod) {
    String node = pod.getSpec().getNodeName();
    if (node == null || node.isEmpty()) {
      Map<String, String> a = pod.getMetadata().getAnnotations();
      Optional<WakeMemo.Woken> w = woken.of(pod.getMetadata().getUid());
      if (a != null && Long.toString(job.id()).equals(a.get(WellKnown.JOB_ANNOTATION))) {
        node = a.get(WellKnown.NODE_ANNOTATION);
      } else if (w.isPresent() && w.get().jobId() == job.id()) {
        node = w.get().node();
      }
    }
    if (node == null || node.isEmpty()) {
      return OptionalInt.empty();
    }
    List<String> nodes = job.nodes();
    for (int i = 0; i < nodes.size(); i++) {
      if (nodeNames.kubernetes(nodes.get(i)).equals(node)) {
        return OptionalInt.of(i);
      }
    }
    return OptionalInt.empty();
  }

  static Optional<Instant> created(Pod pod) {
    try {
      return Optional.of(Instant.parse(pod.getMetadata().getCreationTimestamp()));
    } catch (RuntimeException e) {
      return Optional.empty();
    }
  }

  /** When the pod's grace period ends (its deletion timestamp), if it is being deleted. */
  private static Optional<Instant> deletionDeadline(Pod p) {
    String at = p.getMetadata().getDeletionTimestamp();
    try {
      return at == null ? Optional.empty() : Optional.of(Instant.parse(at));
    } catch (java.time.format.DateTimeParseException e) {
      return Optional.empty();
    }
  }
}
