package io.kse.policy.load;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kse.policy.PolicyValidationException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PolicyStoreTest {
  private static final String GOOD =
      """
      apiVersion: kse.io/v1alpha1
      kind: PlacementPolicy
      cluster: {preemptMode: partition}
      defaultTier: inference
      tiers:
        - name: inference
          slurm: {partition: inference}
      """;

  @Test
  @org.junit.jupiter.api.Timeout(60)
  void aHugePolicyFileIsRefusedAtOnceAndTheNextGoodOneStillLoads(@TempDir Path dir)
      throws Exception {
    // a 50 MB comment line left the watcher parsing for ever: later good policies never loaded
    Path f = Files.writeString(dir.resolve("policy.yaml"), GOOD);
    try (PolicyStore store = new PolicyStore(f)) {
      Files.writeString(f, GOOD + "# " + "x".repeat(50_000_000) + "\n");
      PolicyStore.Outcome huge = store.reload();
      assertThat(huge.result()).isEqualTo(PolicyStore.Outcome.Result.REJECTED);
      assertThat(huge.error()).get().asString().contains("bytes; at most");
      Files.writeString(f, GOOD.replace("partition: inference}", "partition: gpu}"));
      assertThat(store.reload().result()).isEqualTo(PolicyStore.Outcome.Result.APPLIED);
    }
  }

  @Test
  void appliesAGoodChangeAndKeepsTheLastGoodPolicyWhenTheNewOneIsBad(@TempDir Path dir)
      throws Exception {
    Path f = Files.writeString(dir.resolve("policy.yaml"), GOOD);
    List<PolicyStore.Outcome> seen = new CopyOnWriteArrayList<>();
    try (PolicyStore store = new PolicyStore(f)) {
      store.addListener(seen::add);
      assertThat(store.reload().result()).isEqualTo(PolicyStore.Outcome.Result.UNCHANGED);

      Files.writeString(f, GOOD.replace("partition: inference}", "partition: gpu}"));
      assertThat(store.reload().result()).isEqualTo(PolicyStore.Outcome.Result.APPLIED);
      assertThat(store.policy().tiers().get(0).slurm().partition()).contains("gpu");
      String goodDigest = store.digest();

      Files.writeString(f, GOOD.replace("defaultTier: inference", "defaultTier: inferense"));
      PolicyStore.Outcome bad = store.reload();
      assertThat(bad.result()).isEqualTo(PolicyStore.Outcome.Result.REJECTED);
      assertThat(bad.error()).get().asString().contains("defaultTier: unknown tier \"inferense\"");
      assertThat(store.policy().tiers().get(0).slurm().partition())
          .as("last good kept")
          .contains("gpu");
      assertThat(store.digest()).isEqualTo(goodDigest);

      Files.delete(f);
      assertThat(store.reload().result()).isEqualTo(PolicyStore.Outcome.Result.REJECTED);
      assertThat(store.policy()).isNotNull();
    }
    assertThat(seen)
        .extracting(PolicyStore.Outcome::result)
        .containsExactly(
            PolicyStore.Outcome.Result.APPLIED,
            PolicyStore.Outcome.Result.REJECTED,
            PolicyStore.Outcome.Result.REJECTED);
  }

  @Test
  void saysWhileTheFileIsRefusedUntilItIsFixedOrPutBack(@TempDir Path dir) throws Exception {
    Path f = Files.writeString(dir.resolve("policy.yaml"), GOOD);
    try (PolicyStore store = new PolicyStore(f)) {
      assertThat(store.rejecting()).isFalse();
      Files.writeString(f, GOOD.replace("defaultTier: inference", "defaultTier: inferense"));
      store.reload();
      assertThat(store.rejecting()).as("a bad file: the older policy in force").isTrue();
      store.reload();
      assertThat(store.rejecting()).as("polled again, still bad").isTrue();
      Files.writeString(f, GOOD);
      assertThat(store.reload().result()).isEqualTo(PolicyStore.Outcome.Result.UNCHANGED);
      assertThat(store.rejecting()).as("put back as it was").isFalse();
      Files.writeString(f, "nonsense: [");
      store.reload();
      assertThat(store.rejecting()).isTrue();
      Files.writeString(f, GOOD.replace("partition: inference}", "partition: gpu}"));
      assertThat(store.reload().result()).isEqualTo(PolicyStore.Outcome.Result.APPLIED);
      assertThat(store.rejecting()).as("fixed").isFalse();
    }
  }

  @Test
  void watchesTheFileInTheBackground(@TempDir Path dir) throws Exception {
    Path f = Files.writeString(dir.resolve("policy.yaml"), GOOD);
    try (PolicyStore store = new PolicyStore(f)) {
      store.watch(Duration.ofMillis(20));
      Files.writeString(f, GOOD.replace("partition: inference}", "partition: gpu}"));
      long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
      while (store.policy().tiers().get(0).slurm().partition().orElse("").equals("inference")
          && System.nanoTime() < deadline) {
        Thread.sleep(10);
      }
      assertThat(store.policy().tiers().get(0).slurm().partition()).contains("gpu");
    }
  }

  @Test
  void aBadFirstPolicyIsFatal(@TempDir Path dir) throws Exception {
    Path f = Files.writeString(dir.resolve("policy.yaml"), "apiVersion: nope\n");
    assertThatThrownBy(() -> new PolicyStore(f)).isInstanceOf(PolicyValidationException.class);
  }
}
