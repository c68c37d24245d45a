package io.kse.policy;

import static org.assertj.core.api.Assertions.assertThat;

import io.kse.policy.PreemptionLedger.Charge;
import io.kse.policy.PreemptionLedger.Usage;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The budgets' memory: charges saved, restored into a new ledger, each victim counted once. */
class PreemptionLedgerTest {
  private static final Instant NOW = Instant.parse("2026-11-26T12:00:00Z");
  private static final Duration HOUR = Duration.ofHours(1);

  @Test
  void aRestoredLedgerSpendsTheSameBudgetAndCountsAVictimOnce() {
    PreemptionLedger before = new PreemptionLedger();
    before.record("inference", 8, 1, NOW.minus(Duration.ofMinutes(50)), 101);
    before.record("inference", 16, 2, NOW.minus(Duration.ofMinutes(10)), 102);
    before.record("serving", 8, 1, NOW.minus(Duration.ofHours(3)), 103);
    List<Charge> saved = before.charges(NOW, HOUR);
    assertThat(saved).extracting(Charge::victimJob).containsExactly(101L, 102L);

    PreemptionLedger after = new PreemptionLedger(); // a restarted extender
    after.record("inference", 16, 2, NOW.minus(Duration.ofMinutes(10)), 102); // seen again
    assertThat(after.restore(saved)).as("only the charge it had not seen").isEqualTo(1);
    assertThat(after.usage("inference", HOUR, NOW)).isEqualTo(new Usage(24, 3));
    assertThat(after.record("inference", 8, 1, NOW, 101))
        .as("a victim already charged is not charged twice")
        .isFalse();
    assertThat(after.usage("inference", HOUR, NOW)).isEqualTo(new Usage(24, 3));
  }

  @Test
  void anOlderChargeRestoredAfterNewerOnesStillLeavesTheWindowInTime() {
    PreemptionLedger l = new PreemptionLedger();
    l.record("inference", 8, 1, NOW.minus(Duration.ofMinutes(5)), 7);
    l.restore(List.of(new Charge("inference", 8, 1, NOW.minus(Duration.ofMinutes(90)), 6)));
    assertThat(l.usage("inference", HOUR, NOW))
        .as("the 90-minute-old charge is out of the window, the newer one is not")
        .isEqualTo(new Usage(8, 1));
    assertThat(l.record("inference", 8, 1, NOW, 6))
        .as("a victim whose charge left the window may be charged again (Slurm reuses no id soon)")
        .isTrue();
  }

  @Test
  void chargesWithoutAVictimAreKeptApartYetARestoredCopyOfOneIsNotAddedAgain() {
    PreemptionLedger l = new PreemptionLedger();
    l.record("inference", 8, 1, NOW);
    l.record("inference", 8, 1, NOW);
    assertThat(l.usage("inference", HOUR, NOW)).isEqualTo(new Usage(16, 2));
    // replicas read the saved copy every few seconds: an equal charge is the one already held
    l.restore(List.of(new Charge("inference", 8, 1, NOW, 0)));
    assertThat(l.usage("inference", HOUR, NOW)).isEqualTo(new Usage(16, 2));
    l.restore(List.of(new Charge("inference", 4, 1, NOW, 0)));
    assertThat(l.usage("inference", HOUR, NOW)).isEqualTo(new Usage(20, 3));
  }

  /** The soak's finding: a training job requeued and preempted again was charged only once. */
  @Test
  void eachRunAJobLosesIsOnePreemption() {
    PreemptionLedger l = new PreemptionLedger();
    assertThat(l.record("inference", 4, 1, NOW, 22, 1)).isTrue();
    assertThat(l.record("inference", 4, 1, NOW, 22, 1)).as("the same run, seen again").isFalse();
    assertThat(l.record("inference", 4, 1, NOW, 22, 2))
        .as("requeued, ran, preempted again")
        .isTrue();
    assertThat(l.restore(List.of(new Charge("inference", 4, 1, NOW, 22, 2)))).isZero();
    assertThat(l.usage("inference", HOUR, NOW)).isEqualTo(new Usage(8, 2));
  }
}
