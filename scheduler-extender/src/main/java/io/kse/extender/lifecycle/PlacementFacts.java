package io.kse.extender.lifecycle;

import io.kse.extender.k8s.PodRef;
import io.kse.slurm.SlurmJob;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What is true now for one placement: each member pod as the informer has it, the placement's
 * placeholder job as the Slurm cache has it, and what the extender itself has in flight. Nothing
 * here depends on which transitions were seen.
 *
 * @param members the pods there are, with their indexes
 * @param size how many members the placement has when complete
 * @param group what makes it a group, if it is one
 * @param incompleteOverdue the group has waited longer than it may for its missing members
 * @param job its placeholder job: the live one if any, else the latest that ended
 * @param own what the extender has in flight for it (submitting, submitted, rejected, backing off)
 * @param submittedNotSeen a job Slurm accepted for it that the cache has not shown yet
 * @param unusableNode why a node Slurm allocated cannot take its member (cordoned, drained), if so
 * @param retryDue whether a failed submission's backoff has passed
 * @param duplicates other live jobs Slurm holds for the same placement
 * @param failedNodes the nodes members are bound to that Slurm has down, failed, drained or not
 *     responding, each with Slurm's words for it: why a placeholder lost its node
 * @param queuedBehind for a pending placeholder, the other of ours pending unheld in its partition
 *     that it waits behind ({@link io.kse.slurm.SubmissionOrder#leader}); empty when none
 */
public record PlacementFacts(
    List<Member> members,
    int size,
    Optional<Placement.Group> group,
    boolean incompleteOverdue,
    Optional<SlurmJob> job,
    Optional<PlaceholderState> own,
    Optional<Long> submittedNotSeen,
    Optional<String> unusableNode,
    boolean retryDue,
    List<SlurmJob> duplicates,
    Map<String, String> failedNodes,
    java.util.OptionalLong queuedBehind) {

  public PlacementFacts {
    members = List.copyOf(members);
    duplicates = List.copyOf(duplicates);
    failedNodes = Map.copyOf(failedNodes);
  }

  /** A pod of its own (tests, and the single-pod path). */
  public PlacementFacts(
      List<Member> members,
      Optional<SlurmJob> job,
      Optional<PlaceholderState> own,
      Optional<Long> submittedNotSeen,
      Optional<String> unusableNode,
      boolean retryDue) {
    this(
        members,
        1,
        Optional.empty(),
        false,
        job,
        own,
        submittedNotSeen,
        unusableNode,
        retryDue,
        List.of(),
        Map.of(),
        java.util.OptionalLong.empty());
  }

  /** The same facts, its placeholder waiting behind {@code leader} (empty: behind none). */
  public PlacementFacts withQueuedBehind(java.util.OptionalLong leader) {
    return new PlacementFacts(
        members,
        size,
        group,
        incompleteOverdue,
        job,
        own,
        submittedNotSeen,
        unusableNode,
        retryDue,
        duplicates,
        failedNodes,
        leader);
  }

  /**
   * Whether every member that must exist before the job is submitted does: all of them, or for a
   * leader-first group its leader.
   */
  public boolean complete() {
    java.util.Set<Integer> present = new java.util.HashSet<>();
    for (Member m : members) {
      if (m.pod().needsJob()) {
        present.add(m.index());
      }
    }
    if (group.map(Placement.Group::exclusiveTopology).orElse(false) && present.contains(0)) {
      return true;
    }
    for (int i = 0; i < size; i++) {
      if (!present.contains(i)) {
        return false;
      }
    }
    return true;
  }

  /**
   * One member pod.
   *
   * @param index its place in the placement: it goes to the allocation's {@code index}-th node
   * @param boundNode the node it is bound to (BOUND and TERMINATING only)
   * @param woken whether it was already woken for the placement's current job
   * @param terminatingOverdue it is TERMINATING well past its deletion deadline (its kubelet has
   *     not confirmed its containers stopped)
   * @param gpus the GPUs per node it asks (0: not compared)
   */
  public record Member(
      PodRef ref,
      PodStanding pod,
      String boundNode,
      int index,
      boolean woken,
      boolean terminatingOverdue,
      long gpus) {
    public Member(PodRef ref, PodStanding pod, String boundNode, int index, boolean woken) {
      this(ref, pod, boundNode, index, woken, false, 0);
    }

    public Member(
        PodRef ref,
        PodStanding pod,
        String boundNode,
        int index,
        boolean woken,
        boolean terminatingOverdue) {
      this(ref, pod, boundNode, index, woken, terminatingOverdue, 0);
    }

    /** The Slurm node of {@code job} this member goes to, if the job holds one for it. */
    public Optional<String> nodeIn(SlurmJob job) {
      return Placement.nodeOf(index, gpus, job);
    }
  }

  /** Where a pod stands, as far as its placeholder cares. */
  public enum PodStanding {
    /** No such pod (deleted, or never seen by the informer). */
    ABSENT,
    /** Succeeded or Failed: its containers are gone. */
    TERMINAL,
    /** Not bound and being deleted: no container will ever run. */
    DELETING_UNBOUND,
    /** Not bound yet. */
    PENDING,
    /** Bound to a node: its containers run, or will. */
    BOUND,
    /**
     * Bound and being deleted: its containers may still run, so its job is kept until the pod is
     * gone or terminal.
     */
    TERMINATING;

    /** Where the pod the informer has (or has not) stands. */
    static PodStanding of(java.util.Optional<io.fabric8.kubernetes.api.model.Pod> pod) {
      if (pod.isEmpty()) {
        return ABSENT;
      }
      io.fabric8.kubernetes.api.model.Pod p = pod.get();
      String phase = p.getStatus() == null ? null : p.getStatus().getPhase();
      if ("Succeeded".equals(phase) || "Failed".equals(phase)) {
        return TERMINAL;
      }
      boolean bound = p.getSpec().getNodeName() != null && !p.getSpec().getNodeName().isEmpty();
      boolean deleting = p.getMetadata().getDeletionTimestamp() != null;
      if (bound) {
        return deleting ? TERMINATING : BOUND;
      }
      return deleting ? DELETING_UNBOUND : PENDING;
    }

    /** Whether a pod standing so still needs the placement's job. */
    boolean needsJob() {
      return this == PENDING || this == BOUND || this == TERMINATING;
    }
  }
}
