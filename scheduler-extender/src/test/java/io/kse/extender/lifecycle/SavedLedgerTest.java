package io.kse.extender.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;

import io.kse.extender.k8s.LedgerStore;
import io.kse.policy.PlacementPolicy;
import io.kse.policy.PolicyParser;
import io.kse.policy.PreemptionLedger;
import io.kse.policy.PreemptionLedger.Charge;
import io.kse.policy.PreemptionLedger.Usage;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * Budgets survive a restart and a fail-over, whichever replica saw the preemption; what could not
 * be read is never overwritten, and two replicas never undo each other.
 */
class SavedLedgerTest {
  static final Instant NOW = Instant.parse("2026-11-26T12:00:00Z");
  final io.kse.slurm.testing.MutableClock clock = new io.kse.slurm.testing.MutableClock(NOW);
  static final Duration HOUR = Duration.ofHours(1);

  /** A store in memory with versions, that can be made to fail or to lose a race. */
  static final class MemoryStore implements LedgerStore {
    List<Charge> saved = new ArrayList<>();
    long version; // 0: nothing saved yet
    boolean broken;
    int saves;

    /** Run once between the next read and its write: another replica writing in between. */
    Runnable between;

    @Override
    public Saved load() {
      if (broken) {
        throw new IllegalStateException("configmaps is forbidden");
      }
      Saved s =
          new Saved(
              List.copyOf(saved),
              version == 0 ? Optional.empty() : Optional.of(Long.toString(version)));
      if (between != null) {
        Runnable r = between;
        between = null;
        r.run();
      }
      return s;
    }

    @Override
    public boolean save(List<Charge> charges, Optional<String> read) {
      if (broken) {
        throw new IllegalStateException("configmaps is forbidden");
      }
      if (!read.equals(version == 0 ? Optional.empty() : Optional.of(Long.toString(version)))) {
        return false;
      }
      saves++;
      version++;
      saved = new ArrayList<>(charges);
      return true;
    }

    /** Another replica's write. */
    void write(Charge c) {
      saved.add(c);
      version++;
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
    SavedLedger a = new SavedLedger(first, store, SavedLedgerTest::policy, clock);
    a.takeOver();
    first.record("inference", 8, 1, NOW.minus(Duration.ofMinutes(30)), 41);
    a.tick();
    assertThat(store.saved).extracting(Charge::victimJob).containsExactly(41L);
    clock.advance(Duration.ofSeconds(30));
    a.tick();
    assertThat(store.saves).as("nothing new, nothing written").isEqualTo(1);

    PreemptionLedger second = new PreemptionLedger(); // the extender restarted: memory is gone
    SavedLedger b = new SavedLedger(second, store, SavedLedgerTest::policy, clock);
    b.takeOver();
    assertThat(second.usage("inference", HOUR, clock.instant())).isEqualTo(new Usage(8, 1));
    assertThat(policy().budgetUse(second, clock.instant())).containsEntry("inference", 0.5);
  }

  /**
   * The soak's gap: the writer restarts within its Lease while the standby sees a preemption. The
   * standby saves it, and the restarted writer reads it when it takes over.
   */
  @Test
  void aPreemptionOnlyTheStandbySawIsInTheRestartedWritersBudget() {
    MemoryStore store = new MemoryStore();
    PreemptionLedger standby = new PreemptionLedger();
    SavedLedger s = new SavedLedger(standby, store, SavedLedgerTest::policy, clock);
    s.tick();
    standby.record("inference", 8, 1, NOW, 77); // the writer was down
    s.tick();
    assertThat(store.saved).extracting(Charge::victimJob).containsExactly(77L);

    PreemptionLedger restarted = new PreemptionLedger();
    SavedLedger w = new SavedLedger(restarted, store, SavedLedgerTest::policy, clock);
    w.takeOver();
    assertThat(restarted.usage("inference", HOUR, NOW)).isEqualTo(new Usage(8, 1));
    // and a writer already running sees it within REREAD
    PreemptionLedger running = new PreemptionLedger();
    SavedLedger r = new SavedLedger(running, store, SavedLedgerTest::policy, clock);
    r.tick();
    store.write(new Charge("inference", 8, 1, NOW, 78));
    clock.advance(SavedLedger.REREAD.minusSeconds(1));
    r.tick();
    assertThat(running.usage("inference", HOUR, NOW)).isEqualTo(new Usage(8, 1));
    clock.advance(Duration.ofSeconds(1));
    r.tick();
    assertThat(running.usage("inference", HOUR, NOW)).isEqualTo(new Usage(16, 2));
  }

  @Test
  void twoReplicasWritingAtOnceNeverUndoEachOther() {
    MemoryStore store = new MemoryStore();
    PreemptionLedger ledger = new PreemptionLedger();
    SavedLedger s = new SavedLedger(ledger, store, SavedLedgerTest::policy, clock);
    ledger.record("inference", 8, 1, NOW, 5);
    // the other replica writes 6 between this one's read and its write: the write is refused,
    // read again, and both are kept
    store.between = () -> store.write(new Charge("inference", 8, 1, NOW, 6));
    s.tick();
    assertThat(store.saved).extracting(Charge::victimJob).containsExactlyInAnyOrder(5L, 6L);
    assertThat(ledger.usage("inference", HOUR, NOW)).isEqualTo(new Usage(16, 2));
  }

  @Test
  void whatCannotBeReadIsNeverOverwritten() {
    MemoryStore store = new MemoryStore();
    store.write(new Charge("inference", 8, 1, NOW.minus(Duration.ofMinutes(5)), 7));
    PreemptionLedger ledger = new PreemptionLedger();
    SavedLedger s = new SavedLedger(ledger, store, SavedLedgerTest::policy, clock);
    ledger.record("inference", 8, 1, NOW.minus(Duration.ofMinutes(1)), 8);
    store.broken = true;
    s.takeOver();
    s.tick();
    assertThat(store.saved).as("unreadable: kept as it was").hasSize(1);

    store.broken = false;
    s.tick();
    assertThat(store.saved)
        .as("read, merged, then saved: the other replica's charge and this one's")
        .extracting(Charge::victimJob)
        .containsExactly(7L, 8L);
    assertThat(ledger.usage("inference", HOUR, NOW)).isEqualTo(new Usage(16, 2));
  }

  @Test
  void restoringTheSameCopyTwiceAddsNothingEvenWithoutVictims() {
    PreemptionLedger ledger = new PreemptionLedger();
    List<Charge> saved = List.of(new Charge("inference", 8, 1, NOW, 0));
    assertThat(ledger.restore(saved)).isEqualTo(1);
    assertThat(ledger.restore(saved)).isZero();
    assertThat(ledger.usage("inference", HOUR, NOW)).isEqualTo(new Usage(8, 1));
  }
}
