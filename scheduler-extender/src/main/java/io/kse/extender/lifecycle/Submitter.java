package io.kse.extender.lifecycle;

import io.fabric8.kubernetes.api.model.Pod;
import io.kse.extender.k8s.ClusterIdentity;
import io.kse.extender.k8s.EventReason;
import io.kse.extender.k8s.PodActions;
import io.kse.extender.k8s.PodRef;
import io.kse.policy.Decision;
import io.kse.policy.PlacementPolicy;
import io.kse.policy.PodFacts;
import io.kse.policy.PodManifest;
import io.kse.policy.PreemptionLedger;
import io.kse.policy.model.Tier;
import io.kse.slurm.InvalidSubmission;
import io.kse.slurm.JobSubmission;
import io.kse.slurm.PlaceholderTag;
import io.kse.slurm.SlurmClient;
import io.kse.slurm.SlurmException;
import io.kse.slurm.SlurmRejectedException;
import io.kse.slurm.SubmissionOrder;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Turns a pod into its placeholder job: the policy decides, slurmrestd accepts, the registry
 * records the job id (the cache shows it only on its next poll). A policy refusal is final for the
 * pod; Slurm being unavailable is retried with backoff.
 */
final class Submitter {
  private static final Logger LOG = LoggerFactory.getLogger(Submitter.class);
  static final Duration MAX_BACKOFF = Duration.ofMinutes(1);

  private final SlurmClient slurm;
  private final Supplier<PlacementPolicy> policy;
  private final PreemptionLedger ledger;
  private final PlaceholderRegistry registry;
  private final PodActions actions;
  private final Clock clock;
  private final String workDir;
  private final JobSubmission.Shape shape;
  private final ClusterIdentity cluster;
  private final NodeStanding standing;
  private final PodFactsReader podFacts;
  private final SubmissionOrder order;

  Submitter(
      PlacementReconciler.Views v,
      PlacementReconciler.Calls c,
      PlacementReconciler.Settings s,
      NodeStanding standing,
      PodFactsReader podFacts,
      SubmissionOrder order) {
    this.slurm = c.slurm();
    this.policy = s.policy();
    this.ledger = s.ledger();
    this.registry = v.registry();
    this.actions = c.actions();
    this.clock = c.clock();
    this.workDir = s.workDir();
    this.shape = s.shape();
    this.cluster = v.cluster();
    this.standing = standing;
    this.podFacts = podFacts;
    this.order = order;
  }

  /**
   * Submits the placement's placeholder; the caller has claimed it in the registry. {@code pods}
   * are the members that exist, in index order (the leader first). Returns the job id, or 0 when
   * nothing was submitted.
   */
  long submit(Placement placement, List<Pod> pods) {
    List<PodRef> refs = pods.stream().map(PodRef::of).toList();
    List<PodFacts> facts = new ArrayList<>();
    for (Pod pod : pods) {
      try {
        facts.add(podFacts.facts(pod));
      } catch (io.kse.extender.dra.ClaimProblem e) {
        reject(placement, refs, "pod " + pod.getMetadata().getName() + ": " + e.getMessage());
        return 0;
      } catch (PodManifest.Unreadable e) {
        reject(
            placement,
            refs,
            "unreadable pod " + pod.getMetadata().getName() + ": " + e.getMessage());
        return 0;
      }
    }
    Optional<Placement.Group> group = placement.group();
    Decision d = decide(placement, facts);
    if (d instanceof Decision.Reject r) {
      reject(placement, refs, r.reason());
      return 0;
    }
    try {
      Optional<String> fenced = SharedGpuFence.refusal(facts, slurm::release);
      if (fenced.isPresent()) {
        reject(placement, refs, fenced.get());
        return 0;
      }
    } catch (SlurmException e) {
      failed(placement, refs, e);
      return 0;
    }
    Decision.Place place = (Decision.Place) d;
    PodRef lead = refs.get(0);
    PlaceholderTag tag =
        PlaceholderTag.of(
                lead.namespace(),
                lead.name(),
                lead.uid(),
                group.map(Placement.Group::id),
                placement.size())
            .inCluster(cluster.get());
    try {
      // slurmrestd 22.05 refuses excluded_nodes: there a cordon must also drain the node in Slurm
      // (KSE_DRAIN_VIA), else Slurm may allocate it again (StepRunner spaces those replacements)
      Set<String> avoid =
          slurm.apiVersion().supportsExcludedNodes() ? standing.unusableSlurmNodes() : Set.of();
      JobSubmission s = io.kse.slurm.PlaceholderJobs.of(tag, place.job(), workDir, shape, avoid);
      boolean preempts = policy.get().policy().tier(place.tier()).map(Tier::preempts).orElse(true);
      SubmissionOrder.Sent sent = order.submit(s, slurm, preempts);
      long id = sent.jobId();
      registry.put(
          placement.key(), new PlaceholderState.Submitted(id, place.tier(), clock.instant()));
      LOG.info(
          "placeholder_submitted pod={} uid={} slurmJob={} tier={} partition={} qos={} gres={}"
              + " nodes={} heldBehind={}",
          placement.name(),
          lead.uid(),
          id,
          place.tier(),
          place.job().partition().orElse("-"),
          place.job().qos().orElse("-"),
          place.job().gresPerNode().orElse("-"),
          place.job().nodes(),
          sent.heldBehind().isPresent() ? sent.heldBehind().getAsLong() : "-");
      String message =
          "placeholder submitted as Slurm job "
              + id
              + " (tier "
              + place.tier()
              + place.job().partition().map(p -> ", partition " + p).orElse("")
              + place.job().qos().map(q -> ", qos " + q).orElse("")
              + group.map(g -> ", " + placement.size() + " nodes for " + g.source()).orElse("")
              + ")"
              + (sent.heldBehind().isEmpty()
                  ? ""
                  : ", held behind placeholder job "
                      + sent.heldBehind().getAsLong()
                      + " pending in its partition, so that Slurm preempts for one at a time");
      refs.forEach(r -> actions.event(r, EventReason.SUBMITTED, message));
      return id;
    } catch (InvalidSubmission | SlurmRejectedException e) {
      reject(placement, refs, e.getMessage());
    } catch (SlurmException e) {
      failed(placement, refs, e);
    }
    return 0;
  }

  /**
   * The one decision for a placement: a pod's own, or its group's from the members that exist and
   * need the job ({@code members}, in index order, the leader first). What is submitted and what
   * /explain shows both come from here.
   */
  Decision decide(Placement placement, List<PodFacts> members) {
    return placement.group().isEmpty()
        ? policy.get().decide(members.get(0), ledger, clock.instant())
        : policy
            .get()
            .decideGroup(
                placement.groupFacts(members, standing::domainsTakenBesides),
                ledger,
                clock.instant());
  }

  private void failed(Placement placement, List<PodRef> refs, SlurmException e) {
    int attempts =
        1
            + registry
                .get(placement.key())
                .filter(PlaceholderState.SubmitFailed.class::isInstance)
                .map(x -> ((PlaceholderState.SubmitFailed) x).attempts())
                .orElse(0);
    Duration backoff =
        Duration.ofSeconds(Math.min(MAX_BACKOFF.getSeconds(), 1L << Math.min(6, attempts)));
    registry.put(
        placement.key(),
        new PlaceholderState.SubmitFailed(
            "Slurm unavailable", clock.instant().plus(backoff), attempts));
    LOG.warn(
        "placeholder_submit_failed pod={} uid={} attempt={} retryInMs={} error={}",
        placement.name(),
        refs.get(0).uid(),
        attempts,
        backoff.toMillis(),
        e.getMessage());
    for (PodRef ref : refs) {
      actions.event(
          ref,
          EventReason.SUBMIT_FAILED,
          "could not submit the Slurm placeholder (attempt "
              + attempts
              + ", retrying): "
              + e.getMessage());
    }
  }

  private void reject(Placement placement, List<PodRef> refs, String reason) {
    registry.put(placement.key(), new PlaceholderState.Rejected(reason, placement.uids()));
    LOG.info(
        "placeholder_rejected pod={} uid={} reason=\"{}\"",
        placement.name(),
        refs.get(0).uid(),
        reason);
    for (PodRef ref : refs) {
      actions.event(ref, EventReason.REJECTED, reason);
      actions.condition(ref, false, "Rejected", reason);
      actions.ungate(ref); // so kube-scheduler tries it and shows the filter's reason
    }
  }
}
