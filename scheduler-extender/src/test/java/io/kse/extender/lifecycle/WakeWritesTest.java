package io.kse.extender.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.kse.extender.k8s.PodActions.WakeUp;
import io.kse.extender.k8s.WellKnown;
import io.kse.extender.testing.Pods;
import java.util.Map;
import org.junit.jupiter.api.Test;

class WakeWritesTest {
  static Pod gated() {
    return Pods.pending("llm-0", 1, 1, Map.of())
        .editSpec()
        .addNewSchedulingGate()
        .withName("example.com/other")
        .endSchedulingGate()
        .addNewSchedulingGate()
        .withName(WellKnown.SCHEDULING_GATE)
        .endSchedulingGate()
        .endSpec()
        .build();
  }

  @Test
  void aGatedPodNobodyToldItWaitsOnASmallClusterIsWokenByOneWrite() {
    assertThat(new WakeWrites(() -> 999, 1000).of(gated(), false)).isEqualTo(WakeUp.UNGATE);
  }

  @Test
  void fromTheThresholdOnEveryWokenPodIsNominated() {
    assertThat(new WakeWrites(() -> 1000, 1000).of(gated(), false))
        .isEqualTo(WakeUp.NOMINATE_THEN_UNGATE);
    assertThat(new WakeWrites(() -> 0, 0).of(gated(), false))
        .isEqualTo(WakeUp.NOMINATE_THEN_UNGATE);
  }

  @Test
  void aPodToldItWaitsIsNominatedSoItsConditionTurnsWhateverTheClusterSize() {
    assertThat(new WakeWrites(() -> 8, 1000).of(Pods.toldItWaits(gated()), false))
        .isEqualTo(WakeUp.NOMINATE_THEN_UNGATE);
  }

  @Test
  void aPodThisExtenderToldItWaitsIsNominatedBeforeTheInformerShowsTheCondition() {
    assertThat(new WakeWrites(() -> 8, 1000).of(gated(), true))
        .isEqualTo(WakeUp.NOMINATE_THEN_UNGATE);
  }

  @Test
  void aPodNoLongerGatedIsNominatedOnly() {
    Pod ungated = Pods.pending("llm-0", 1, 1);
    assertThat(new WakeWrites(() -> 8, 1000).of(ungated, false)).isEqualTo(WakeUp.NOMINATE);
    Pod otherGateOnly =
        new PodBuilder(gated())
            .editSpec()
            .removeMatchingFromSchedulingGates(g -> g.getName().equals(WellKnown.SCHEDULING_GATE))
            .endSpec()
            .build();
    assertThat(new WakeWrites(() -> 8, 1000).of(otherGateOnly, false)).isEqualTo(WakeUp.NOMINATE);
  }
}
