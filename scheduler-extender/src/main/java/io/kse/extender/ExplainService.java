package io.kse.extender;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.api.model.Pod;
import io.kse.extender.k8s.PodRef;
import io.kse.extender.k8s.PodSource;
import io.kse.extender.lifecycle.PlaceholderRegistry;
import io.kse.extender.lifecycle.Placement;
import io.kse.extender.lifecycle.WhyWaiting;
import io.kse.policy.Contribution;
import io.kse.policy.Decision;
import io.kse.slurm.SlurmJob;
import io.kse.slurm.cache.SlurmView;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;

/**
 * {@code GET /explain/{namespace}/{pod}}: the decision record, the placeholder and Slurm's view.
 */
final class ExplainService {
  private static final ObjectMapper JSON =
      new ObjectMapper().registerModule(new com.fasterxml.jackson.datatype.jdk8.Jdk8Module());

  private final PodSource pods;
  private final PlaceholderRegistry registry;
  private final SlurmView cache;
  private final Function<PodRef, Placement> placementOf;
  private final java.util.function.BiFunction<Placement, Pod, Decision> decider;

  /**
   * @param decider the reconciler's decision for a pod's placement now ({@code
   *     PlacementReconciler#decide}): what is shown is what a submission would submit
   */
  private final Function<String, Optional<WhyWaiting>> toldWaiting;

  ExplainService(
      Function<PodRef, Placement> placementOf,
      java.util.function.BiFunction<Placement, Pod, Decision> decider,
      PodSource pods,
      PlaceholderRegistry registry,
      SlurmView cache,
      Function<String, Optional<WhyWaiting>> toldWaiting) {
    this.toldWaiting = toldWaiting;
    this.pods = pods;
    this.registry = registry;
    this.cache = cache;
    this.placementOf = placementOf;
    this.decider = decider;
  }

  Optional<JsonNode> explain(PodRef ref) {
    Optional<Pod> pod = pods.pod(ref.namespace(), ref.name());
    if (pod.isEmpty()) {
      return Optional.empty();
    }
    String uid = pod.get().getMetadata().getUid();
    ObjectNode out = JSON.createObjectNode();
    out.put("pod", ref.namespace() + "/" + ref.name()).put("uid", uid);
    out.put("nodeName", Optional.ofNullable(pod.get().getSpec().getNodeName()).orElse(""));
    Placement placement = placementOf.apply(PodRef.of(pod.get()));
    Optional<SlurmJob> job = cache.jobFor(placement.key());
    Decision d = decide(placement, pod.get()); // the placement resolved once, above
    out.put("tier", d.tier());
    out.put("decision", d instanceof Decision.Place ? "place" : "reject");
    if (d instanceof Decision.Reject r) {
      out.put("reason", r.reason());
    } else {
      out.set("job", JSON.valueToTree(((Decision.Place) d).job()));
    }
    var record = out.putArray("record");
    for (Contribution c : d.record()) {
      record.addObject().put("rule", c.rule()).put("effect", c.effect());
    }
    placement.group().ifPresent(g -> out.set("group", group(placement, g, job)));
    out.put("placeholderState", registry.get(placement.key()).map(Object::toString).orElse("none"));
    // what the pod's condition says, the same words filter gives (WhyWaiting); the writer knows
    toldWaiting
        .apply(uid)
        .ifPresent(
            w ->
                out.putObject("waiting")
                    .put("reason", w.reason().reason())
                    .put("message", w.message()));
    job.ifPresent(
        j ->
            out.putObject("slurmJob")
                .put("id", j.id())
                .put("state", j.state().name())
                .put("reason", j.stateReason())
                .put("nodes", String.join(",", j.nodes()))
                .put("partition", j.partition())
                .put("qos", j.qos())
                .put("restarts", j.restartCount()));
    out.put("slurmCacheAgeMs", cache.age().toMillis());
    return Optional.of(out);
  }

  /** The pod's own decision, or its group's: the very decision a submission now would make. */
  private Decision decide(Placement placement, Pod pod) {
    try {
      return decider.apply(placement, pod);
    } catch (io.kse.extender.dra.ClaimProblem | io.kse.policy.PodManifest.Unreadable e) {
      return new Decision.Reject("-", e.getMessage(), List.of());
    }
  }

  /** The group: its size, and every member with the node Slurm allocated to its index. */
  private static ObjectNode group(Placement p, Placement.Group g, Optional<SlurmJob> job) {
    ObjectNode out = JSON.createObjectNode();
    out.put("id", g.id()).put("source", g.source()).put("size", p.size());
    g.problem().ifPresent(x -> out.put("problem", x));
    var members = out.putArray("members");
    p.members().stream()
        .sorted(Comparator.comparingInt(Placement.Slot::index))
        .forEach(
            m ->
                members
                    .addObject()
                    .put("pod", m.ref().toString())
                    .put("uid", m.ref().uid())
                    .put("index", m.index())
                    .put(
                        "slurmNode",
                        job.flatMap(j -> Placement.nodeOf(m.index(), m.gpus(), j)).orElse("")));
    return out;
  }
}
