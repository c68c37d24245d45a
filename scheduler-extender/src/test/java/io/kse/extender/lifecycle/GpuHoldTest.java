package io.kse.extender.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.kse.extender.k8s.WellKnown;
import io.kse.slurm.testing.MutableClock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class GpuHoldTest {
  private static Pod pod(String name, String job, String node, String phase, boolean deleting) {
    PodBuilder b =
        new PodBuilder()
            .withNewMetadata()
            .withNamespace("serving")
            .withName(name)
            .endMetadata()
            .withNewSpec()
            .withNodeName(node)
            .endSpec()
            .withNewStatus()
            .withPhase(phase)
            .endStatus();
    if (job != null) {
      b.editMetadata().addToAnnotations(WellKnown.JOB_ANNOTATION, job).endMetadata();
    }
    if (deleting) {
      b.editMetadata().withDeletionTimestamp("2026-11-28T04:00:00Z").endMetadata();
    }
    return b.build();
  }

  @Test
  void holdsOnlyWhileAPodOfThatJobIsBoundToThatNodeAndHasNotFinished() {
    assertThat(GpuHold.of(7, "n1", "n1", List.of(pod("a", "7", "n1", "Running", false))).hold())
        .isTrue();
    assertThat(GpuHold.of(7, "n1", "n1", List.of(pod("a", "7", "n1", "Running", true))).hold())
        .as("Terminating: its containers may still hold the GPUs")
        .isTrue();
    assertThat(GpuHold.of(7, "n1", "n1", List.of(pod("a", "7", "n1", "Succeeded", true))).hold())
        .isFalse();
    assertThat(GpuHold.of(7, "n1", "n1", List.of(pod("a", "7", "n1", "Failed", false))).hold())
        .isFalse();
    assertThat(GpuHold.of(7, "n1", "n1", List.of(pod("a", "7", "n2", "Running", false))).hold())
        .as("bound elsewhere")
        .isFalse();
    assertThat(GpuHold.of(7, "n1", "n1", List.of(pod("a", "8", "n1", "Running", false))).hold())
        .as("another job's pod")
        .isFalse();
    assertThat(GpuHold.of(7, "n1", "n1", List.of(pod("a", null, null, "Pending", false))).hold())
        .as("never bound")
        .isFalse();
    assertThat(GpuHold.of(7, "n1", "n1", List.of()).line())
        .isEqualTo("release no pod of Slurm job 7 runs on n1");
    assertThat(GpuHold.of(7, "n1", "k8s-n1", List.of(pod("b", "7", "k8s-n1", "Running", false))))
        .extracting(GpuHold.Verdict::line)
        .isEqualTo("hold 1 pod(s) of Slurm job 7 still run on n1 (k8s-n1): [serving/b]");
  }

  @Test
  void aHoldAskedForPastItsBoundIsCountedOnceAndAReleaseEndsIt() {
    MutableClock clock = new MutableClock();
    List<Pod> pods = new ArrayList<>(List.of(pod("a", "7", "n1", "Running", true)));
    List<String> answers = new ArrayList<>();
    AtomicInteger overdue = new AtomicInteger();
    GpuHold hold =
        new GpuHold(
            new io.kse.extender.k8s.PodSource() {
                  @Override
                  public java.util.Optional<Pod> pod(String namespace, String name) {
                    return java.util.Optional.empty();
                  }

                  @Override
                  public List<Pod> pods() {
                    return pods;
                  }
                }
                ::podsOn,
            n -> n,
            clock,
            answers::add,
            overdue::incrementAndGet);
    for (int i = 0; i < 200; i++) {
      assertThat(hold.ask(7, "n1").hold()).isTrue();
      clock.advance(Duration.ofSeconds(1));
    }
    assertThat(overdue).as("past 120 s, once").hasValue(1);
    pods.clear();
    assertThat(hold.ask(7, "n1").hold()).isFalse();
    assertThat(answers).hasSize(201).endsWith("hold", "release");
    pods.add(pod("b", "9", "n1", "Running", false));
    for (int i = 0; i < 100; i++) {
      hold.ask(9, "n1");
      clock.advance(Duration.ofSeconds(1));
    }
    assertThat(overdue).as("a hold within its bound is not overdue").hasValue(1);
  }
}
