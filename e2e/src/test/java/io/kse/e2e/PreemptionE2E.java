package io.kse.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.Pod;
import io.kse.slurm.SlurmJob;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** Scenario 2: every GPU busy with training; an inference pod gets a node by Slurm preemption. */
class PreemptionE2E extends Scenario {

  @Test
  void inferencePodPreemptsTrainingThroughSlurm() {
    assumeTrue(stack.managed(), "submits training with sbatch: needs the local Slurm CLI");
    Map<Long, String> training = busyEveryGpuNode("training"); // job id -> its node

    long created = System.nanoTime();
    Pod pod = create(inferencePod("llm-urgent", 8));
    Pod bound = awaitBound("llm-urgent");
    System.out.printf(
        "[e2e] preempting pod bound in %d ms%n", (System.nanoTime() - created) / 1_000_000);

    SlurmJob placeholder = placeholderOf(pod);
    String node = bound.getSpec().getNodeName();
    assertThat(placeholder.nodes()).containsExactly(node);
    assertThat(placeholder.partition()).isEqualTo("inference");

    // exactly the training job on that node gave way, and Slurm requeued it (not cancelled)
    List<SlurmJob> displaced = displaced(training);
    assertThat(displaced).hasSize(1);
    SlurmJob victim = displaced.get(0);
    assertThat(training.get(victim.id())).isEqualTo(node);
    assertThat(victim.state().isFinal()).as("requeued, state %s", victim.state()).isFalse();

    await("the pod's Events explain the preemption")
        .atMost(Duration.ofSeconds(15))
        .untilAsserted(
            () ->
                assertThat(events("llm-urgent"))
                    .extracting(Event::getReason, Event::getMessage)
                    .anySatisfy(
                        t -> {
                          assertThat(t.toList().get(0)).isEqualTo("PreemptedSlurmJob");
                          assertThat((String) t.toList().get(1))
                              .contains(Long.toString(victim.id()));
                        }));
    // the budget's charge is kept where a restarted writer finds it (the extender's own RBAC)
    await("the charge saved in the ledger's ConfigMap")
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(
            () ->
                assertThat(
                        kube.configMaps()
                            .inNamespace("kube-slurm-extender")
                            .withName("kube-slurm-extender-preemptions")
                            .get())
                    .isNotNull()
                    .extracting(c -> c.getData().get("charges.json"))
                    .asString()
                    .contains("\"victimJob\" : " + victim.id()));
  }

  /**
   * Reconciler sequence 6: several placeholders start on nodes of preempted training; each victim
   * is charged exactly once, to one pod (one 8-GPU preemption was charged as 64 GPUs before). Issue
   * 60: four 2-GPU pods fit one node, so Slurm preempts one training job (ours queue behind each
   * other), and a victim whose node none of ours took would still be told and charged, inferred.
   */
  @Test
  void eachPreemptedTrainingJobIsChargedOnceToOnePod() {
    assumeTrue(stack.managed(), "submits training with sbatch: needs the local Slurm CLI");
    Map<Long, String> training = busyEveryGpuNode("training");
    // four 2-GPU pods: Slurm may put several on one preempted node
    List<String> names = List.of("small-0", "small-1", "small-2", "small-3");
    for (String n : names) {
      create(inferencePod(n, 2));
    }
    names.forEach(this::awaitBound);
    List<Long> requeued =
        training.keySet().stream()
            .filter(id -> !slurm.job(id).map(Scenario::running).orElse(false))
            .toList();
    // every Event names one victim; no victim is named twice (charged to two pods)
    java.util.function.Supplier<List<Long>> charged =
        () ->
            names.stream()
                .flatMap(n -> events(n).stream())
                .filter(e -> e.getReason().equals("PreemptedSlurmJob"))
                .map(e -> victimOf(e.getMessage()))
                .toList();
    java.util.Set<String> ours =
        names.stream().map(n -> pod(n).getSpec().getNodeName()).collect(Collectors.toSet());
    assertThat(requeued).as("8 GPUs' worth of pods preempt one training job").hasSize(1);
    assertThat(ours)
        .as("all four on the victim's node")
        .containsExactly(training.get(requeued.get(0)));
    // a victim none of ours took is told once its window (60 s) passed
    await("each requeued job charged once")
        .atMost(Duration.ofSeconds(75))
        .untilAsserted(
            () -> assertThat(charged.get()).containsExactlyInAnyOrderElementsOf(requeued));
    System.out.printf(
        "[e2e] 4 pods on %s: %d training job(s) requeued, charged %d%n",
        ours, requeued.size(), charged.get().size());
  }

  /** The victim's job id in "Slurm preempted job N (…". */
  static long victimOf(String message) {
    java.util.regex.Matcher m =
        java.util.regex.Pattern.compile("Slurm preempted job (\\d+)").matcher(message);
    if (!m.find()) {
      throw new AssertionError("no victim in: " + message);
    }
    return Long.parseLong(m.group(1));
  }
}
