package io.kse.policy;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

class PreemptionPlannerTest {
  private static final Instant NOW = Instant.parse("2026-11-22T06:00:00Z");
  private final PreemptionPlanner planner = new PreemptionPlanner(Policies.lab());

  private static RunningJob job(
      long id, String partition, String qos, long gpus, int nodes, Duration ago) {
    return new RunningJob(id, "j" + id, partition, qos, gpus, nodes, NOW.minus(ago));
  }

  @Test
  void listsPreemptibleJobsLowestTierAndYoungestFirst() {
    List<PreemptionPlanner.Verdict> v =
        planner.plan(
            "inference",
            List.of(
                job(1, "training", "training", 8, 1, Duration.ofHours(3)),
                job(2, "training", "training", 8, 1, Duration.ofHours(1)),
                job(3, "inference", "batch", 2, 1, Duration.ofMinutes(30)),
                job(4, "inference", "inference-critical", 8, 1, Duration.ofHours(1)),
                job(5, "debug", "debug", 1, 1, Duration.ofHours(1))),
            new PreemptionLedger(),
            NOW);
    assertThat(v)
        .extracting(x -> x.job().id() + ":" + x.preemptible())
        .containsExactly("2:true", "1:true", "3:true", "4:false", "5:false");
    assertThat(v.get(3).reason())
        .isEqualTo("tier inference may not preempt tier inference-critical");
    assertThat(v.get(4).reason()).contains("belongs to no tier");
  }

  @Test
  void minimumRuntimeProtectsYoungTrainingJobs() {
    var v =
        planner.plan(
            "inference",
            List.of(job(1, "training", "training", 8, 1, Duration.ofMinutes(14))),
            new PreemptionLedger(),
            NOW);
    assertThat(v.get(0).preemptible()).isFalse();
    assertThat(v.get(0).reason())
        .isEqualTo("protected by minimum runtime 00:15:00 of tier training (ran 00:14:00)");
    v =
        planner.plan(
            "inference",
            List.of(job(1, "training", "training", 8, 1, Duration.ofMinutes(15))),
            new PreemptionLedger(),
            NOW);
    assertThat(v.get(0).preemptible()).isTrue();
  }

  @Test
  void theBudgetProtectsJobsBiggerThanWhatIsLeft() {
    PreemptionLedger ledger = new PreemptionLedger();
    ledger.record("inference", 24, 3, NOW.minus(Duration.ofMinutes(2)));
    var v =
        planner.plan(
            "inference",
            List.of(
                job(1, "training", "training", 8, 1, Duration.ofHours(1)),
                job(2, "training", "training", 16, 2, Duration.ofHours(1))),
            ledger,
            NOW);
    assertThat(v)
        .extracting(x -> x.job().id() + ":" + x.preemptible())
        .containsExactly("1:true", "2:false");
    assertThat(v.get(1).reason())
        .isEqualTo("protected by the budget of tier inference (8 GPUs, 1 nodes left)");
  }

  @Test
  void theLedgerForgetsWhatLeftTheWindow() {
    PreemptionLedger ledger = new PreemptionLedger();
    ledger.record("inference", 8, 1, NOW.minus(Duration.ofMinutes(11)));
    ledger.record("inference", 16, 2, NOW.minus(Duration.ofMinutes(9)));
    ledger.record("inference-critical", 8, 1, NOW);
    assertThat(ledger.usage("inference", Duration.ofMinutes(10), NOW))
        .isEqualTo(new PreemptionLedger.Usage(16, 2));
    assertThat(ledger.usage("batch", Duration.ofMinutes(10), NOW))
        .isEqualTo(new PreemptionLedger.Usage(0, 0));
  }
}
