package io.kse.extender.k8s;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** Two replicas on one Lease (fabric8 mock API server): exactly one writer, and a hand-over. */
@EnableKubernetesMockClient(crud = true)
class WriterLeaseIT {
  static KubernetesClient client;

  @Test
  void exactlyOneReplicaWritesAndThePeerTakesOverWhenItStops() {
    AtomicInteger takeovers = new AtomicInteger();
    WriterLease a =
        new WriterLease(client, "kse", "writer", "replica-a", takeovers::incrementAndGet);
    await().atMost(Duration.ofSeconds(10)).until(a::getAsBoolean);
    WriterLease b =
        new WriterLease(client, "kse", "writer", "replica-b", takeovers::incrementAndGet);
    try {
      await()
          .during(Duration.ofSeconds(3))
          .atMost(Duration.ofSeconds(5))
          .until(() -> a.getAsBoolean() && !b.getAsBoolean());
      assertThat(takeovers).hasValue(1);
      a.close(); // releases the lease
      await().atMost(Duration.ofSeconds(20)).until(b::getAsBoolean);
      assertThat(a.getAsBoolean()).isFalse();
      assertThat(takeovers).hasValue(2);
      assertThat(
              client
                  .leases()
                  .inNamespace("kse")
                  .withName("writer")
                  .get()
                  .getSpec()
                  .getHolderIdentity())
          .isEqualTo("replica-b");
    } finally {
      b.close();
    }
  }

  /**
   * A writer that stops leaves the Lease without a holder, so nothing reads a stopped replica as
   * the writer (its cleanup, kubectl): fabric8's own release merges a null holder, which keeps it.
   */
  @Test
  void aStoppedWriterLeavesTheLeaseWithoutAHolder() {
    WriterLease a = new WriterLease(client, "kse", "stops", "replica-a", () -> {});
    await().atMost(Duration.ofSeconds(10)).until(a::getAsBoolean);
    a.close();
    var spec = client.leases().inNamespace("kse").withName("stops").get().getSpec();
    assertThat(spec.getHolderIdentity()).as("holder after close").isNull();
    assertThat(spec.getRenewTime()).isNotNull();
  }
}
