package io.kse.extender.lifecycle;

import io.fabric8.kubernetes.api.model.Pod;
import io.kse.extender.k8s.WellKnown;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whether a placeholder's node must stay out of Slurm's hands a while longer: Slurm's node Epilog
 * (manifests/slurm/kse-node-epilog) asks, after the placeholder ended for whatever reason (a
 * cancel, its time limit, a requeue, a preemption), and keeps the node COMPLETING — which Slurm
 * never allocates — while the answer is "hold". It holds while a pod of that job is bound to that
 * node and has not finished: its containers may still hold the GPUs' memory, and the next job must
 * not start on them. A pod already gone, one never bound there, or one that finished releases at
 * once, so our own cancel after a pod's deletion is never held.
 *
 * <p>The Epilog bounds the hold itself and then lets the node go (fail open); a hold still asked
 * for after {@link #OVERDUE} is counted and logged once, which {@code KseGpuHoldOverdue} alerts on.
 */
public final class GpuHold {
  private static final Logger LOG = LoggerFactory.getLogger(GpuHold.class);

  /** The Epilog's default bound (KSE_HOLD_MAX_S): a hold asked for longer is overdue. */
  public static final Duration OVERDUE = Duration.ofSeconds(120);

  /** What the Epilog is told. */
  public record Verdict(boolean hold, String why) {
    /** One line: {@code hold …} or {@code release …}, the Epilog reads the first word. */
    public String line() {
      return (hold ? "hold " : "release ") + why;
    }
  }

  /**
   * The decision alone: {@code pods} are our scheduler's pods as the informer has them; those of
   * job {@code jobId} bound to {@code kubeNode} that have not finished hold it.
   */
  public static Verdict of(long jobId, String slurmNode, String kubeNode, Collection<Pod> pods) {
    String job = Long.toString(jobId);
    List<String> holding =
        pods.stream()
            .filter(p -> kubeNode.equals(p.getSpec() == null ? null : p.getSpec().getNodeName()))
            .filter(p -> job.equals(annotations(p).get(WellKnown.JOB_ANNOTATION)))
            .filter(p -> !finished(p))
            .map(p -> p.getMetadata().getNamespace() + "/" + p.getMetadata().getName())
            .sorted()
            .toList();
    String where = "on " + slurmNode + (kubeNode.equals(slurmNode) ? "" : " (" + kubeNode + ")");
    if (holding.isEmpty()) {
      return new Verdict(false, "no pod of Slurm job " + jobId + " runs " + where);
    }
    return new Verdict(
        true,
        holding.size() + " pod(s) of Slurm job " + jobId + " still run " + where + ": " + holding);
  }

  private static Map<String, String> annotations(Pod p) {
    Map<String, String> a = p.getMetadata().getAnnotations();
    return a == null ? Map.of() : a;
  }

  /** Succeeded or Failed: its containers have stopped. Terminating is not finished. */
  private static boolean finished(Pod p) {
    String phase = p.getStatus() == null ? null : p.getStatus().getPhase();
    return "Succeeded".equals(phase) || "Failed".equals(phase);
  }

  private record Key(long job, String node) {}

  /** Held since; whether it was counted overdue already. */
  private record Held(Instant since, boolean counted) {}

  private final java.util.function.Function<String, ? extends Collection<Pod>> podsOn;
  private final java.util.function.UnaryOperator<String> kubeNodeOf;
  private final Clock clock;
  private final Consumer<String> answered;
  private final Runnable overdue;
  private final Map<Key, Held> holding = new ConcurrentHashMap<>();

  /**
   * @param podsOn our pods bound to a Kubernetes node (the informer's index: an Epilog's question
   *     costs that node's pods, not the cluster's)
   * @param kubeNodeOf the Kubernetes node of a Slurm node
   * @param answered told "hold" or "release" per answer (a metric)
   * @param overdue told once per job and node whose hold outlived {@link #OVERDUE}
   */
  public GpuHold(
      java.util.function.Function<String, ? extends Collection<Pod>> podsOn,
      java.util.function.UnaryOperator<String> kubeNodeOf,
      Clock clock,
      Consumer<String> answered,
      Runnable overdue) {
    this.podsOn = podsOn;
    this.kubeNodeOf = kubeNodeOf;
    this.clock = clock;
    this.answered = answered;
    this.overdue = overdue;
  }

  /** The Epilog of {@code slurmNode} asks for {@code jobId}: the verdict, noted. */
  public Verdict ask(long jobId, String slurmNode) {
    String kubeNode = kubeNodeOf.apply(slurmNode);
    Verdict v = of(jobId, slurmNode, kubeNode, podsOn.apply(kubeNode));
    Key key = new Key(jobId, slurmNode);
    Instant now = clock.instant();
    answered.accept(v.hold() ? "hold" : "release");
    if (!v.hold()) {
      Held was = holding.remove(key);
      if (was != null) {
        LOG.info(
            "gpu_hold_released slurmJob={} slurmNode={} heldMs={}",
            jobId,
            slurmNode,
            Duration.between(was.since(), now).toMillis());
      }
      return v;
    }
    Held was = holding.putIfAbsent(key, new Held(now, false));
    if (was == null) {
      LOG.info("gpu_hold slurmJob={} slurmNode={} why=\"{}\"", jobId, slurmNode, v.why());
      forgetOld(now);
    } else if (!was.counted()
        && Duration.between(was.since(), now).compareTo(OVERDUE) > 0
        && holding.replace(key, was, new Held(was.since(), true))) {
      overdue.run(); // once per job and node
      LOG.warn(
          "gpu_hold_overdue slurmJob={} slurmNode={} heldMs={} why=\"{}\"",
          jobId,
          slurmNode,
          Duration.between(was.since(), now).toMillis(),
          v.why());
    }
    return v;
  }

  /** Holds the Epilog gave up asking about long ago (it let the node go) are forgotten. */
  private void forgetOld(Instant now) {
    Instant before = now.minus(OVERDUE.multipliedBy(10));
    holding.values().removeIf(h -> h.since().isBefore(before));
  }
}
