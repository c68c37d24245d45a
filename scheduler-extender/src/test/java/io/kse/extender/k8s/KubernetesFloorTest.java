package io.kse.extender.k8s;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class KubernetesFloorTest {
  @ParameterizedTest
  @ValueSource(strings = {"v1.36.0", "v1.37.2", "v1.40.1-gke.3", "v2.0.0", "1.36"})
  void atOrAboveTheFloorIsNothingToSay(String version) {
    assertThat(KubernetesFloor.below(version)).isEmpty();
  }

  @ParameterizedTest
  @ValueSource(strings = {"v1.35.4", "v1.30.0-eks-1", "v1.9.11"})
  void belowTheFloorIsSaidWithWhatWillNotWork(String version) {
    assertThat(KubernetesFloor.below(version))
        .hasValueSatisfying(
            why ->
                assertThat(why).contains(version).contains("older than 1.36").contains("shares"));
  }

  @ParameterizedTest
  @ValueSource(strings = {"", "unknown", "vX.Y"})
  void anUnreadableVersionClaimsNothing(String version) {
    assertThat(KubernetesFloor.below(version)).isEmpty();
  }
}
