package io.kse.extender;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.api.model.Pod;
import io.kse.extender.k8s.PodRef;
import io.kse.extender.k8s.PodSource;
import io.kse.extender.lifecycle.PlaceholderRegistry;
import io.kse.policy.Contribution;
import io.kse.policy.Decision;
import io.kse.policy.PlacementPolicy;
import io.kse.policy.PodManifest;
import io.kse.policy.PreemptionLedger;
import io.kse.slurm.cache.SlurmStateCache;
import java.time.Clock;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * {@code GET /explain/{namespace}/{pod}}: the decision record, the placeholder and Slurm's view.
 */
final class ExplainService {
  private static final ObjectMapper JSON =
      new ObjectMapper().registerModule(new com.fasterxml.jackson.datatype.jdk8.Jdk8Module());

  private final PodSource pods;
  private final Supplier<PlacementPolicy> policy;
  private final PreemptionLedger ledger;
  private final PlaceholderRegistry registry;
  private final SlurmStateCache cache;
  private final Clock clock;

  ExplainService(
      PodSource pods,
      Supplier<PlacementPolicy> policy,
      PreemptionLedger ledger,
      PlaceholderRegistry registry,
      SlurmStateCache cache,
      Clock clock) {
    this.pods = pods;
    this.policy = policy;
    this.ledger = ledger;
    this.registry = registry;
    this.cache = cache;
    this.clock = clock;
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
    Decision d =
        policy
            .get()
            .decide(PodManifest.facts(JSON.valueToTree(pod.get())), ledger, clock.instant());
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
    out.put("placeholderState", registry.get(uid).map(Object::toString).orElse("none"));
    cache
        .jobForPod(uid)
        .ifPresent(
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
}
