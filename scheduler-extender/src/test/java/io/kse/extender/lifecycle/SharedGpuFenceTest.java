package io.kse.extender.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;

import io.kse.policy.PodFacts;
import io.kse.slurm.SlurmRelease;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class SharedGpuFenceTest {
  static PodFacts pod(long shares) {
    return new PodFacts(
            "ns",
            "small",
            "u1",
            Map.of(),
            Map.of(),
            Optional.empty(),
            OptionalInt.empty(),
            Optional.empty(),
            0,
            0,
            Map.of(),
            OptionalLong.empty())
        .withDraGpuShares(shares);
  }

  @Test
  void partOfAGpuIsRefusedByNameOnASlurmThatMixesShardsAndWholeGpus() {
    assertThat(
            SharedGpuFence.refusal(List.of(pod(1)), () -> Optional.of(new SlurmRelease(22, 5, 8))))
        .hasValueSatisfying(
            r ->
                assertThat(r)
                    .contains("Slurm 22.05.8")
                    .contains("SchedMD bug 19110")
                    .contains("need Slurm 23.11.5 or later")
                    .endsWith("ask whole GPUs"));
    assertThat(
            SharedGpuFence.refusal(List.of(pod(1)), () -> Optional.of(new SlurmRelease(24, 11, 5))))
        .isEmpty();
  }

  @Test
  void slurmIsAskedOnlyForAPodAskingPartOfAGpuAndAnUnsaidReleaseIsNoRefusal() {
    AtomicInteger asked = new AtomicInteger();
    assertThat(
            SharedGpuFence.refusal(
                List.of(pod(0), pod(0)),
                () -> {
                  asked.incrementAndGet();
                  return Optional.of(new SlurmRelease(22, 5, 8));
                }))
        .isEmpty();
    assertThat(asked).hasValue(0);
    assertThat(SharedGpuFence.refusal(List.of(pod(0), pod(2)), Optional::empty)).isEmpty();
  }
}
