package io.kse.extender.lifecycle;

import io.kse.extender.k8s.EventReason;
import io.kse.extender.lifecycle.PlacementFacts.Member;
import io.kse.extender.lifecycle.PlacementFacts.PodStanding;
import io.kse.slurm.JobState;
import io.kse.slurm.SlurmJob;
import io.kse.slurm.SubmissionOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.UnaryOperator;

/**
 * The reconciler's rules: from what is true now, what must be done. The invariant they keep: a pod
 * runs if and only if its placement's Slurm job holds its node, and a job lives exactly as long as
 * any pod of its placement needs it. Pure: no I/O, no clock, no memory of earlier passes.
 */
public final class PlacementRules {
  private final UnaryOperator<String> kubeNodeName;

  /**
   * @param kubeNodeName the Kubernetes name of a Slurm node
   */
  public PlacementRules(UnaryOperator<String> kubeNodeName) {
    this.kubeNodeName = kubeNodeName;
  }

  /** Every step this pass must take; empty when the placement is as it must be. */
  public List<Step> decide(PlacementFacts f) {
    List<Step> steps = new ArrayList<>(placement(f));
    // one placeholder per placement: a second live one (a submission that timed out had reached
    // Slurm before the retry made another) holds GPUs nobody will use
    for (SlurmJob d : f.duplicates()) {
      steps.add(
          new Step.Cancel(
              d.id(),
              "a second placeholder for this placement (job "
                  + f.job().map(j -> Long.toString(j.id())).orElse("?")
                  + " is the one kept)"));
    }
    return steps;
  }

  private List<Step> placement(PlacementFacts f) {
    Optional<SlurmJob> live = f.job().filter(j -> !j.state().isFinal());
    if (f.members().stream().noneMatch(m -> m.pod().needsJob())) {
      return released(f, live);
    }
    List<Step> steps = new ArrayList<>();
    for (Member m : f.members()) {
      if (m.pod() == PodStanding.BOUND) {
        bound(f, m, live).ifPresent(steps::add);
      } else if (m.pod() == PodStanding.TERMINATING && m.terminatingOverdue() && live.isPresent()) {
        steps.add(new Step.HeldForTerminating(m.ref(), live.get().id(), m.boundNode()));
      }
    }
    if (f.members().stream().anyMatch(m -> m.pod() == PodStanding.PENDING)) {
      steps.addAll(pending(f, live));
    }
    return steps;
  }

  /** No pod needs the job any more: end it (or the one submitted but not seen yet). */
  private static List<Step> released(PlacementFacts f, Optional<SlurmJob> live) {
    PodStanding why = f.members().isEmpty() ? PodStanding.ABSENT : f.members().get(0).pod();
    String reason =
        f.group().isPresent()
            ? "every pod of the group is gone or finished"
            : why == PodStanding.ABSENT
                ? "pod deleted"
                : why == PodStanding.TERMINAL ? "pod finished" : "pod deleted before binding";
    if (live.isPresent()) {
      return List.of(new Step.Cancel(live.get().id(), reason));
    }
    if (f.submittedNotSeen().isPresent()) {
      return List.of(new Step.Cancel(f.submittedNotSeen().get(), reason));
    }
    return f.own().isPresent() ? List.of(new Step.Forget()) : List.of();
  }

  /** A bound member may run only while the job holds its node. */
  private Optional<Step> bound(PlacementFacts f, Member m, Optional<SlurmJob> live) {
    if (live.isPresent() && live.get().state() == JobState.UNKNOWN) {
      // a state this bridge cannot read (a newer Slurm's word) is no evidence the node is lost:
      // evicting on it would kill a pod over a parsing gap; the next listing decides
      return Optional.empty();
    }
    if (live.isPresent()
        && live.get().state().holdsNodes()
        && live.get().state() != JobState.COMPLETING
        && live.get().nodes().stream().map(kubeNodeName).anyMatch(m.boundNode()::equals)) {
      if (live.get().preempting()) {
        // the placeholder holds the node within its grace time until this pod is gone; the job is
        // cancelled only then (released), so no Slurm job gets these GPUs while the pod runs
        return Optional.of(
            new Step.Evict(
                m.ref(),
                "Slurm chose job "
                    + live.get().id()
                    + " for preemption at "
                    + live.get().preemptTime().orElseThrow()
                    + "; it holds "
                    + m.boundNode()
                    + " until this pod has stopped",
                0,
                EventReason.PREEMPTING));
      }
      return Optional.empty();
    }
    String why =
        f.job()
                .map(
                    j ->
                        "Slurm job "
                            + j.id()
                            + (j.endedAs() == JobState.PENDING
                                ? " was requeued" + reasonOf(j)
                                : j.state().isFinal() || j.state() == JobState.COMPLETING
                                    ? " ended (" + j.endedAs() + ")"
                                    : " is " + j.state() + " and no longer holds " + m.boundNode()))
                .orElse("no Slurm job holds " + m.boundNode() + " for this pod")
            // a node's failure ends or requeues the job without a word of it in the job (22.05 to
            // 26.05 say reason None): the node says it
            + Optional.ofNullable(f.failedNodes().get(m.boundNode())).map(n -> ": " + n).orElse("");
    // a requeued placeholder must not come back later for pods that are gone
    long cancel =
        live.filter(j -> j.state() == JobState.PENDING || !j.state().holdsNodes())
            .map(SlurmJob::id)
            .orElse(0L);
    return Optional.of(new Step.Evict(m.ref(), why, cancel));
  }

  /** Slurm's reason for a requeued job's wait, where it gives one. */
  private static String reasonOf(SlurmJob j) {
    return j.stateReason().isBlank() || j.stateReason().equals("None")
        ? ""
        : " (" + j.stateReason() + ")";
  }

  /** Another member with the same index still runs on its node (a recreated member waits). */
  private static boolean occupied(PlacementFacts f, Member m) {
    return f.members().stream()
        .anyMatch(
            o ->
                o != m
                    && o.index() == m.index()
                    && (o.pod() == PodStanding.BOUND || o.pod() == PodStanding.TERMINATING));
  }

  /** Whether a member runs (or may still run) on the placement's job. */
  private static boolean running(PlacementFacts f) {
    return f.members().stream()
        .anyMatch(m -> m.pod() == PodStanding.BOUND || m.pod() == PodStanding.TERMINATING);
  }

  /**
   * How a group's job no longer fits the group as it is now, if it does not: a job asks the same of
   * every node, one node per member, each holding the largest member's GPUs (docs/groups.md). The
   * group's size changed, or a member (recreated) asks more GPUs than the job holds per node.
   */
  static Optional<String> misfit(PlacementFacts f, SlurmJob j) {
    if (f.group().isEmpty()) {
      return Optional.empty(); // a pod's own requests never change
    }
    int held = j.isAllocated() ? j.nodes().size() : j.nodeCount();
    if (held > 0 && held != f.size()) {
      return Optional.of(
          "Slurm job "
              + j.id()
              + " holds "
              + held
              + " node(s), and the group has "
              + f.size()
              + " members now");
    }
    for (Member m : f.members()) {
      if (m.pod() == PodStanding.PENDING && !Placement.fits(m.gpus(), j)) {
        return Optional.of(
            "pod "
                + m.ref().name()
                + " asks "
                + m.gpus()
                + " GPUs per node, and Slurm job "
                + j.id()
                + " holds "
                + j.gpusPerNode()
                + " on each of its nodes");
      }
    }
    return Optional.empty();
  }

  /** Pending members: a job to submit, to wait for, or to go to. */
  private List<Step> pending(PlacementFacts f, Optional<SlurmJob> live) {
    if (f.own().orElse(null) instanceof PlaceholderState.Rejected) {
      return List.of(); // the reason is on the pods; new pods get a new decision
    }
    List<Member> waiting =
        f.members().stream().filter(m -> m.pod() == PodStanding.PENDING).toList();
    Optional<String> problem = f.group().flatMap(Placement.Group::problem);
    boolean running = running(f);
    if (problem.isPresent()) {
      WhyWaiting why = WhyWaiting.groupInvalid(f.group().get().id(), problem.get());
      List<Step> steps = new ArrayList<>();
      if (live.isPresent() && !running) {
        // a job of a shape that no longer stands would run for nobody
        steps.add(new Step.Cancel(live.get().id(), why.message()));
      }
      steps.addAll(waitingSteps(waiting, why));
      return steps;
    }
    if (live.isPresent()) {
      SlurmJob j = live.get();
      Optional<String> misfit = misfit(f, j);
      if (misfit.isPresent()
          && !running
          && (j.isAllocated() || j.state() == JobState.PENDING)
          && !j.preempting()) {
        return List.of(new Step.Replace(j.id(), misfit.get(), EventReason.SHAPE_CHANGED));
      }
      if (j.isAllocated() && j.preempting()) {
        if (!running) { // nothing of ours runs there: let the nodes go now, and ask again
          return List.of(new Step.Replace(j.id(), "Slurm chose it for preemption"));
        }
        return waitingSteps(waiting, WhyWaiting.preempting(j.id()));
      }
      if (j.isAllocated()) {
        if (f.unusableNode().isPresent()) {
          return List.of(new Step.Replace(j.id(), f.unusableNode().get()));
        }
        List<Step> wakes = new ArrayList<>();
        for (Member m : waiting) {
          Optional<String> node = m.nodeIn(j);
          if (node.isEmpty() && misfit.isPresent()) {
            wakes.addAll(waitingSteps(List.of(m), WhyWaiting.shapeChanged(misfit.get())));
          } else if (node.isPresent() && !m.woken() && !occupied(f, m)) {
            wakes.add(new Step.Wake(m.ref(), j.id(), kubeNodeName.apply(node.get())));
          }
        }
        return wakes;
      }
      if (j.state() == JobState.PENDING) {
        return queued(f, j, waiting);
      }
      return List.of(); // completing, suspended: the next change decides
    }
    PlaceholderState own = f.own().orElse(null);
    if (own instanceof PlaceholderState.Submitting || f.submittedNotSeen().isPresent()) {
      return List.of();
    }
    if (!f.complete()) {
      if (!f.incompleteOverdue()) {
        return List.of(); // its controller is still creating the members
      }
      long present =
          f.members().stream()
              .filter(m -> m.pod().needsJob())
              .map(Member::index)
              .distinct()
              .count();
      return waitingSteps(
          waiting,
          WhyWaiting.groupIncomplete(
              f.group().map(Placement.Group::id).orElse("?"), present, f.size()));
    }
    if (own instanceof PlaceholderState.SubmitFailed failed && !f.retryDue()) {
      return waitingSteps(waiting, WhyWaiting.submitFailed(failed.reason()));
    }
    return List.of(
        new Step.Submit(
            f.job()
                .map(
                    j ->
                        "Slurm job "
                            + j.id()
                            + " ended ("
                            + j.state()
                            + ") before the pod was bound")
                .orElse("no placeholder yet")));
  }

  /**
   * A pending placeholder waits in Slurm's queue alone among ours in its partition: held while
   * another pends unheld there, released once none does; of two pending unheld, the younger is held
   * (docs/preemption.md). Slurm then preempts for one of ours at a time.
   */
  private static List<Step> queued(PlacementFacts f, SlurmJob j, List<Member> waiting) {
    SubmissionOrder.Turn turn = SubmissionOrder.turn(j, f.queuedBehind());
    List<Step> steps = new ArrayList<>();
    if (turn == SubmissionOrder.Turn.RELEASE) {
      steps.add(new Step.Queue(j.id(), 0));
      steps.addAll(waitingSteps(waiting, WhyWaiting.slurmPending(j.id(), "released")));
    } else if (turn == SubmissionOrder.Turn.HOLD || SubmissionOrder.held(j)) {
      long leader = f.queuedBehind().getAsLong();
      if (turn == SubmissionOrder.Turn.HOLD) {
        steps.add(new Step.Queue(j.id(), leader));
      }
      steps.addAll(waitingSteps(waiting, WhyWaiting.queuedBehind(j.id(), leader, j.partition())));
    } else {
      steps.addAll(waitingSteps(waiting, WhyWaiting.slurmPending(j.id(), j.stateReason())));
    }
    return steps;
  }

  private static List<Step> waitingSteps(List<Member> waiting, WhyWaiting why) {
    return waiting.stream()
        .map(m -> (Step) new Step.Waiting(m.ref(), why.reason(), why.message()))
        .toList();
  }
}
