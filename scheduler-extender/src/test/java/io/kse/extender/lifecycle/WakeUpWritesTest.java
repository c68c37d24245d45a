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

  /** Slurm allocates the job on gpu-node-1; how each pod was woken. */
  List<WakeUp> wakeUpOnceAllocated(long id) {
    slurm.allocate(id, List.of("gpu-node-1"));
    cache.pollOnce();
    return recorded(Recorded.Wake.class).stream().map(Recorded.Wake::how).toList();
  }

  @Test
  void aGatedPodOnASmallClusterIsWokenByOneWrite() {
    nodeNames.observe("gpu-node-1", null);
    long id = submitted(gated("llm-0", "uid-1"));
    cache.pollOnce();
    assertThat(wakeUpOnceAllocated(id)).containsExactly(WakeUp.UNGATE);
  }

  @Test
  void fromTheThresholdOnAWokenPodIsNominatedBeforeItsGateIsLifted() {
    for (int i = 0; i < 3; i++) {
      nodeNames.observe("gpu-node-" + i, null);
    }
    long id = submitted(gated("llm-0", "uid-1"));
    cache.pollOnce();
    assertThat(wakeUpOnceAllocated(id)).containsExactly(WakeUp.NOMINATE_THEN_UNGATE);
  }

  @Test
  void aPodToldItWaitsIsNominatedEvenBeforeTheInformerShowsItsCondition() {
    long id = submitted(gated("llm-0", "uid-1"));
    slurm.pend(id, "Resources");
    cache.pollOnce();
    clock.advance(PENDING_QUIET.plusSeconds(5));
    cache.pollOnce(); // seen pending past the quiet period
    lifecycle.reconcileAll();
    assertThat(recorded(Recorded.Condition.class)).hasSize(1);
    // the informer still has the pod without it
    assertThat(wakeUpOnceAllocated(id)).containsExactly(WakeUp.NOMINATE_THEN_UNGATE);
  }

  @Test
  void aPodToldItWaitsByAnotherReplicaIsNominatedSoItsConditionSaysAllocated() {
    Pod p = gated("llm-0", "uid-1");
    long id = submitted(p);
    slurm.pend(id, "Resources");
    cache.pollOnce();
    clock.advance(PENDING_QUIET.plusSeconds(5));
    // told by the replica that was the writer then: as the informer has the pod now
    pods.put("serving/llm-0", io.kse.extender.testing.Pods.toldItWaits(p));
    assertThat(wakeUpOnceAllocated(id)).containsExactly(WakeUp.NOMINATE_THEN_UNGATE);
  }
}
