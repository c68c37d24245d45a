package io.kse.extender.lifecycle;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.Pod;
import io.kse.extender.k8s.EventReason;
import io.kse.extender.k8s.PodActions;
import io.kse.extender.k8s.PodRef;
import io.kse.policy.Decision;
import io.kse.policy.PlacementPolicy;
import io.kse.policy.PodFacts;
import io.kse.policy.PodManifest;
import io.kse.policy.PreemptionLedger;
import io.kse.slurm.JobSubmission;
import io.kse.slurm.SlurmClient;
import io.kse.slurm.SlurmException;
import io.kse.slurm.SlurmRejectedException;
import java.time.Clock;
import java.time.Duration;
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
  private static final ObjectMapper JSON = new ObjectMapper();
  static final Duration MAX_BACKOFF = Duration.ofMinutes(1);

  private final SlurmClient slurm;
  private final Supplier<PlacementPolicy> policy;
  private final PreemptionLedger ledger;
  private final PlaceholderRegistry registry;
  private final PodActions actions;
  private final Clock clock;
  private final String workDir;
  private final JobSubmission.Shape shape;

  Submitter(
      SlurmClient slurm,
      Supplier<PlacementPolicy> policy,
      PreemptionLedger ledger,
      PlaceholderRegistry registry,
      PodActions actions,
      Clock clock,
      String workDir,
      JobSubmission.Shape shape) {
    this.slurm = slurm;
    this.policy = policy;
    this.ledger = ledger;
    this.registry = registry;
    this.actions = actions;
    this.clock = clock;
    this.workDir = workDir;
    this.shape = shape;
  }

  /**
   * Submits the pod's placeholder; the caller has claimed the pod in the registry. Returns the job
   * id, or 0 when nothing was submitted.
   */
  long submit(PodRef ref, Pod pod) {
    PodFacts facts;
    try {
      facts = PodManifest.facts(JSON.valueToTree(pod));
    } catch (IllegalArgumentException e) {
      reject(ref, "unreadable pod: " + e.getMessage());
      return 0;
    }
    Decision d = policy.get().decide(facts, ledger, clock.instant());
    if (d instanceof Decision.Reject r) {
      reject(ref, r.reason());
      return 0;
    }
    Decision.Place place = (Decision.Place) d;
    try {
      JobSubmission s = Placeholders.toSubmission(ref, place.job(), workDir, shape);
      long id = slurm.submit(s);
      registry.put(ref.uid(), new PlaceholderState.Submitted(id, place.tier(), clock.instant()));
      LOG.info(
          "placeholder_submitted pod={} uid={} slurmJob={} tier={} partition={} qos={} gres={}",
          ref,
          ref.uid(),
          id,
          place.tier(),
          place.job().partition().orElse("-"),
          place.job().qos().orElse("-"),
          place.job().gresPerNode().orElse("-"));
      actions.event(
          ref,
          EventReason.SUBMITTED,
          "placeholder submitted as Slurm job "
              + id
              + " (tier "
              + place.tier()
              + place.job().partition().map(p -> ", partition " + p).orElse("")
              + place.job().qos().map(q -> ", qos " + q).orElse("")
              + ")");
      return id;
    } catch (IllegalArgumentException | SlurmRejectedException e) {
      reject(ref, e.getMessage());
    } catch (SlurmException e) {
      failed(ref, e);
    }
    return 0;
  }

  private void failed(PodRef ref, SlurmException e) {
    int attempts =
        1
            + registry
                .get(ref.uid())
                .filter(PlaceholderState.SubmitFailed.class::isInstance)
                .map(x -> ((PlaceholderState.SubmitFailed) x).attempts())
                .orElse(0);
    Duration backoff =
        Duration.ofSeconds(Math.min(MAX_BACKOFF.getSeconds(), 1L << Math.min(6, attempts)));
    registry.put(
        ref.uid(),
        new PlaceholderState.SubmitFailed(
            "Slurm unavailable", clock.instant().plus(backoff), attempts));
    LOG.warn(
        "placeholder_submit_failed pod={} uid={} attempt={} retryInMs={} error={}",
        ref,
        ref.uid(),
        attempts,
        backoff.toMillis(),
        e.getMessage());
    actions.event(
        ref,
        EventReason.SUBMIT_FAILED,
        "could not submit the Slurm placeholder (attempt "
            + attempts
            + ", retrying): "
            + e.getMessage());
  }

  private void reject(PodRef ref, String reason) {
    registry.put(ref.uid(), new PlaceholderState.Rejected(reason));
    LOG.info("placeholder_rejected pod={} uid={} reason=\"{}\"", ref, ref.uid(), reason);
    actions.event(ref, EventReason.REJECTED, reason);
    actions.condition(ref, false, "Rejected", reason);
    actions.ungate(ref); // so kube-scheduler tries it and shows the filter's reason
  }
}
