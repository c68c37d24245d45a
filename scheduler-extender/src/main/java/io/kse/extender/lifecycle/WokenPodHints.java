package io.kse.extender.lifecycle;

import io.fabric8.kubernetes.api.model.Pod;
import io.kse.extender.k8s.WellKnown;
import java.util.Map;
import java.util.OptionalLong;
import java.util.function.Consumer;
import java.util.function.LongConsumer;
import java.util.function.LongPredicate;

/**
 * A woken pod names its job ({@code kse.io/slurm-job}, written by the writer as it lets the pod
 * go): a replica whose Slurm cache does not know that job takes the name as an allocation hint.
 * Without it, a replica that did not submit the job and missed Slurm's own hint knows the job only
 * at its next full listing, minutes on, and answers kube-scheduler's filter calls for the pod "not
 * submitted" meanwhile. Only a hint, as Slurm's are: the cache reads the job through slurmrestd and
 * keeps it only if it is one of ours, so a pod that names another job gains nothing.
 */
public final class WokenPodHints implements Consumer<Pod> {
  private final LongPredicate known;
  private final LongConsumer allocated;

  /**
   * @param known whether the Slurm cache holds or follows this job
   * @param allocated the allocation hint's handler ({@code AllocationHints#allocated})
   */
  public WokenPodHints(LongPredicate known, LongConsumer allocated) {
    this.known = known;
    this.allocated = allocated;
  }

  /** A pod of ours was added or changed. */
  @Override
  public void accept(Pod pod) {
    boolean bound = pod.getSpec() != null && pod.getSpec().getNodeName() != null;
    if (bound || pod.getMetadata().getDeletionTimestamp() != null) {
      return; // only an unbound pod's filter call needs its job known
    }
    OptionalLong named = namedJob(pod.getMetadata().getAnnotations());
    if (named.isPresent() && !known.test(named.getAsLong())) {
      allocated.accept(named.getAsLong());
    }
  }

  /** The job a pod's annotations name, if they name one: empty when not woken or not a job id. */
  public static OptionalLong namedJob(Map<String, String> annotations) {
    String named = annotations == null ? null : annotations.get(WellKnown.JOB_ANNOTATION);
    return named != null && named.matches("[1-9][0-9]{0,17}")
        ? OptionalLong.of(Long.parseLong(named))
        : OptionalLong.empty();
  }
}
