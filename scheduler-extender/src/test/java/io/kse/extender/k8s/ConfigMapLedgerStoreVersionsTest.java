package io.kse.extender.k8s;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.kse.policy.PreemptionLedger.Charge;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Two replicas' writes (fabric8's mock API server, which checks resource versions): a write based
 * on a stale read is refused, never applied over the other's, for the create and for an update.
 */
@EnableKubernetesMockClient(crud = true)
class ConfigMapLedgerStoreVersionsTest {
  static KubernetesClient client;
  static final Instant AT = Instant.parse("2026-11-26T12:00:00Z");

  @Test
  void aWriteBasedOnAStaleReadIsRefused() {
    ConfigMapLedgerStore a = new ConfigMapLedgerStore(client, "kse", "kse-preemptions");
    ConfigMapLedgerStore b = new ConfigMapLedgerStore(client, "kse", "kse-preemptions");
    LedgerStore.Saved readByA = a.load();
    LedgerStore.Saved readByB = b.load();
    assertThat(readByA.version()).as("nothing saved yet").isEmpty();
    assertThat(a.save(List.of(new Charge("inference", 8, 1, AT, 1)), readByA.version())).isTrue();
    assertThat(b.save(List.of(new Charge("inference", 8, 1, AT, 2)), readByB.version()))
        .as("b read before a created it")
        .isFalse();

    LedgerStore.Saved again = b.load();
    assertThat(again.charges()).extracting(Charge::victimJob).containsExactly(1L);
    LedgerStore.Saved staleForA = a.load();
    assertThat(
            b.save(
                List.of(new Charge("inference", 8, 1, AT, 1), new Charge("inference", 8, 1, AT, 2)),
                again.version()))
        .isTrue();
    assertThat(a.save(List.of(new Charge("inference", 8, 1, AT, 3)), staleForA.version()))
        .as("a read before b's update")
        .isFalse();
    assertThat(a.load().charges()).extracting(Charge::victimJob).containsExactly(1L, 2L);
  }
}
