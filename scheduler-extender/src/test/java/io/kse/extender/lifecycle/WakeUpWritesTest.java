package io.kse.extender.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.kse.extender.k8s.PodActions.WakeUp;
import io.kse.extender.k8s.WellKnown;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Issue 30: a woken pod costs one API write unless a second one tells somebody something. */
class WakeUpWritesTest extends ReconcilerFixture {
  @Override
  int nominateFromNodes() {
    return 3;
  }

  Pod gated(String name, String uid) {
    Pod p =
        new PodBuilder(pod(name, uid, Map.of()))
            .editSpec()
            .addNewSchedulingGate()
            .withName(WellKnown.SCHEDULING_GATE)
            .endSchedulingGate()
            .endSpec()
            .build();
    pods.put("serving/" + name, p);
    return p;
  }

  List<WakeUp> wakeUps() {
    return recorded(Recorded.Wake.class).stream().map(Recorded.Wake::how).toList();
  }

  @Test
  void aGatedPodOnASmallClusterIsWokenByOneWrite() {
    nodeNames.observe("gpu-node-1", null);
    long id = submitted(gated("llm-0", "uid-1"));
    cache.pollOnce();
    slurm.allocate(id, List.of("gpu-node-1"));
    cache.pollOnce();
    assertThat(wakeUps()).containsExactly(WakeUp.UNGATE);
  }

  @Test
  void fromTheThresholdOnAWokenPodIsNominatedBeforeItsGateIsLifted() {
    for (int i = 0; i < 3; i++) {
      nodeNames.observe("gpu-node-" + i, null);
    }
    long id = submitted(gated("llm-0", "uid-1"));
    cache.pollOnce();
    slurm.allocate(id, List.of("gpu-node-1"));
    cache.pollOnce();
    assertThat(wakeUps()).containsExactly(WakeUp.NOMINATE_THEN_UNGATE);
  }

  @Test
  void aPodToldItWaitsIsNominatedEvenBeforeTheInformerShowsItsCondition() {
    long id = submitted(gated("llm-0", "uid-1"));
    slurm.pend(id, "Resources");
    cache.pollOnce();
    clock.advance(PENDING_QUIET.plusMillis(100));
    lifecycle.reconcileAll();
    assertThat(recorded(Recorded.Condition.class)).hasSize(1);
    slurm.allocate(id, List.of("gpu-node-1")); // the informer still has the pod without it
    cache.pollOnce();
    assertThat(wakeUps()).containsExactly(WakeUp.NOMINATE_THEN_UNGATE);
  }

  @Test
  void aPodToldItWaitsByAnotherReplicaIsNominatedSoItsConditionSaysAllocated() {
    Pod p = gated("llm-0", "uid-1");
    long id = submitted(p);
    slurm.pend(id, "Resources");
    cache.pollOnce();
    clock.advance(PENDING_QUIET.plusMillis(100));
    // told by the replica that was the writer then: as the informer has the pod now
    pods.put(
        "serving/llm-0",
        new PodBuilder(p)
            .editOrNewStatus()
            .addNewCondition()
            .withType(WellKnown.CONDITION)
            .withStatus("False")
            .withReason("SlurmPending")
            .endCondition()
            .endStatus()
            .build());
    slurm.allocate(id, List.of("gpu-node-1"));
    cache.pollOnce();
    assertThat(wakeUps()).containsExactly(WakeUp.NOMINATE_THEN_UNGATE);
  }
}
