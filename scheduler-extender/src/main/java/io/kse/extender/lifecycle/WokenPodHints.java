package io.kse.extender.lifecycle;

import io.fabric8.kubernetes.api.model.Pod;
import io.kse.extender.k8s.WellKnown;
import java.util.Map;
import java.util.OptionalLong;
import java.util.function.Consumer;
import java.util.function.LongConsumer;
import java.util.function.LongPredicate;
import java.util.regex.Pattern;

/**
 * A woken pod names its job ({@code kse.io/slurm-job}, written by the writer as it lets the pod
 * go): a replica whose Slurm cache does not know that job takes the name as an allocation hint.
 * Without it, a replica that did not submit the job and missed Slurm's own hint knows the job only
 * at its next full listing, minutes on, and answers kube-scheduler's filter calls for the pod "not
 * submitted" meanwhile. Only a hint, as Slurm's are: the cache reads the job through slurmrestd and
 * keeps it only if it is one of ours, so a pod that names another job gains nothing.
 */
public final class WokenPodHints implements Consumer<Pod> {
  /** A Slurm job id as the annotation carries it (compiled once: filter calls parse it). */
  private static final Pattern JOB_ID = Pattern.compile("[1-9][0-9]{0,17}");

  private final LongPredicate worthLookingFor;
  private final LongConsumer allocated;

  /**
   * @param worthLookingFor whether the Slurm cache neither holds, follows nor lately dismissed the
   *     job
   * @param allocated the allocation hint's handler ({@code AllocationHints#allocated})
   */
  public WokenPodHints(LongPredicate worthLookingFor, LongConsumer allocated) {
    this.worthLookingFor = worthLookingFor;
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
    if (named.isPresent() && worthLookingFor.test(named.getAsLong())) {
      allocated.accept(named.getAsLong());
    }
  }

  /** The job a pod's annotations name, if they name one: empty when not woken or not a job id. */
  public static OptionalLong namedJob(Map<String, String> annotations) {
    String named = annotations == null ? null : annotations.get(WellKnown.JOB_ANNOTATION);
    return named != null && JOB_ID.matcher(named).matches()
        ? OptionalLong.of(Long.parseLong(named))
        : OptionalLong.empty();
  }
}
