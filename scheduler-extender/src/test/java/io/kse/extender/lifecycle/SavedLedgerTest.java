package io.kse.extender.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;

import io.kse.extender.k8s.LedgerStore;
import io.kse.policy.PlacementPolicy;
import io.kse.policy.PolicyParser;
import io.kse.policy.PreemptionLedger;
import io.kse.policy.PreemptionLedger.Charge;
import io.kse.policy.PreemptionLedger.Usage;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/** Budgets survive a restart and a fail-over; what could not be read is never overwritten. */
class SavedLedgerTest {
  static final Instant NOW = Instant.parse("2026-11-26T12:00:00Z");
  static final Clock CLOCK = Clock.fixed(NOW, ZoneOffset.UTC);
  static final Duration HOUR = Duration.ofHours(1);

  /** A store in memory that can be made to fail. */
  static final class MemoryStore implements LedgerStore {
    List<Charge> saved = new ArrayList<>();
    boolean broken;
    int saves;

    @Override
    public List<Charge> load() {
      if (broken) {
        throw new IllegalStateException("configmaps is forbidden");
      }
      return List.copyOf(saved);
    }

    @Override
    public void save(List<Charge> charges) {
      if (broken) {
        throw new IllegalStateException("configmaps is forbidden");
      }
      saves++;
      saved = new ArrayList<>(charges);
    }
  }

  static PlacementPolicy policy() {
    return new PlacementPolicy(
        PolicyParser.parse(
            """
            apiVersion: kse.io/v1alpha1
            kind: PlacementPolicy
            cluster: {preemptMode: partition, gpuGres: gpu}
            defaultTier: inference
            tiers:
              - name: inference
                slurm: {partition: inference, fallbackPartition: inference-nopreempt}
                mayPreempt: [training]
              - name: training
                slurm: {partition: training}
                preemptible: true
            preemption:
              budgets:
                - {tier: inference, maxGpus: 16, window: 2h}
            """,
            "test"));
  }

  @Test
  void aRestartedWriterSpendsTheBudgetThePreviousOneSpent() {
    MemoryStore store = new MemoryStore();
    PreemptionLedger first = new PreemptionLedger();
    SavedLedger a = new SavedLedger(first, store, SavedLedgerTest::policy, CLOCK, () -> true);
    a.takeOver();
    first.record("inference", 8, 1, NOW.minus(Duration.ofMinutes(30)), 41);
    a.tick();
    assertThat(store.saved).extracting(Charge::victimJob).containsExactly(41L);
    a.tick();
    assertThat(store.saves).as("nothing new, nothing written").isEqualTo(1);

    PreemptionLedger second = new PreemptionLedger(); // the extender restarted: memory is gone
    SavedLedger b = new SavedLedger(second, store, SavedLedgerTest::policy, CLOCK, () -> true);
    b.takeOver();
    assertThat(second.usage("inference", HOUR, NOW)).isEqualTo(new Usage(8, 1));
    assertThat(policy().budgetUse(second, NOW)).containsEntry("inference", 0.5);
  }

  @Test
  void aStandbySavesNothingAndAWriterThatCannotReadOverwritesNothing() {
    MemoryStore store = new MemoryStore();
    store.saved.add(new Charge("inference", 8, 1, NOW.minus(Duration.ofMinutes(5)), 7));
    AtomicBoolean writer = new AtomicBoolean(false);
    PreemptionLedger ledger = new PreemptionLedger();
    SavedLedger s = new SavedLedger(ledger, store, SavedLedgerTest::policy, CLOCK, writer::get);
    ledger.record("inference", 8, 1, NOW.minus(Duration.ofMinutes(1)), 8); // seen as a standby
    s.tick();
    assertThat(store.saves).as("a standby writes nothing").isZero();

    writer.set(true);
    store.broken = true;
    s.takeOver();
    s.tick();
    assertThat(store.saved).as("unreadable: kept as it was").hasSize(1);

    store.broken = false;
    s.tick();
    assertThat(store.saved)
        .as("read, merged, then saved: the previous writer's charge and this one's")
        .extracting(Charge::victimJob)
        .containsExactly(7L, 8L);
    assertThat(ledger.usage("inference", HOUR, NOW)).isEqualTo(new Usage(16, 2));
  }

  @Test
  void aNewTermRestoresAgainWhatAnotherWriterChargedMeanwhile() {
    MemoryStore store = new MemoryStore();
    PreemptionLedger ledger = new PreemptionLedger();
    SavedLedger s = new SavedLedger(ledger, store, SavedLedgerTest::policy, CLOCK, () -> true);
    s.takeOver();
    store.saved.add(new Charge("inference", 8, 1, NOW, 99)); // the other replica's term
    s.takeOver();
    assertThat(ledger.usage("inference", HOUR, NOW)).isEqualTo(new Usage(8, 1));
  }
}
