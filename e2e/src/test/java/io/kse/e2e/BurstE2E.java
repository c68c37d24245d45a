package io.kse.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.kse.slurm.PlaceholderTag;
import io.kse.slurm.SlurmJob;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** Scenarios 4 and 6: a Knative-like burst 0 → 24 → 0, undisturbed and with an extender crash. */
class BurstE2E extends Scenario {
  static final int REPLICAS = 24;

  /** Scenario 4. */
  @Test
  void deploymentScalesFromZeroTo24AndBack() {
    deployment("burst");
    long t0 = System.nanoTime();
    scale("burst", REPLICAS);
    await("all " + REPLICAS + " pods bound")
        .atMost(Duration.ofMinutes(2))
        .pollInterval(Duration.ofMillis(200))
        .until(() -> boundPods().size() == REPLICAS);
    System.out.printf(
        "[e2e] burst of %d pods bound in %d ms%n", REPLICAS, (System.nanoTime() - t0) / 1_000_000);
    assertOnePlaceholderPerPodOnItsNode();
    scaleToZeroAndExpectNoPlaceholders("burst");
  }

  /** Scenario 6: SIGKILL mid-burst; the restarted extender neither loses nor doubles work. */
  @Test
  void extenderKilledMidBurstLosesAndDoublesNothing() {
    assumeTrue(stack.managed(), "kills and restarts the extender process");
    deployment("burst");
    scale("burst", REPLICAS);
    await("a few pods bound")
        .atMost(Duration.ofMinutes(1))
        .pollInterval(Duration.ofMillis(50))
        .until(() -> boundPods().size() >= 4);
    stack.killExtender();
    long killed = System.nanoTime();
    stack.startExtender();
    await("all " + REPLICAS + " pods bound after the restart")
        .atMost(Duration.ofMinutes(3))
        .pollInterval(Duration.ofMillis(200))
        .until(() -> boundPods().size() == REPLICAS);
    System.out.printf(
        "[e2e] after SIGKILL all %d pods bound within %d ms%n",
        REPLICAS, (System.nanoTime() - killed) / 1_000_000);
    assertOnePlaceholderPerPodOnItsNode();
    scaleToZeroAndExpectNoPlaceholders("burst");
  }

  private void assertOnePlaceholderPerPodOnItsNode() {
    List<Pod> pods = boundPods();
    List<SlurmJob> live = activePlaceholders(ns);
    Map<String, List<SlurmJob>> byUid =
        live.stream()
            .collect(
                Collectors.groupingBy(j -> j.placeholder().map(PlaceholderTag::uid).orElse("")));
    assertThat(live).as("live placeholders").hasSize(REPLICAS);
    Map<String, Pod> podsByUid =
        pods.stream().collect(Collectors.toMap(p -> p.getMetadata().getUid(), Function.identity()));
    assertThat(byUid.keySet()).isEqualTo(podsByUid.keySet());
    Map<String, Integer> gpusPerNode = new HashMap<>();
    for (Pod p : pods) {
      List<SlurmJob> jobs = byUid.get(p.getMetadata().getUid());
      assertThat(jobs).as("placeholders of %s", p.getMetadata().getName()).hasSize(1);
      assertThat(jobs.get(0).nodes()).containsExactly(p.getSpec().getNodeName());
      gpusPerNode.merge(p.getSpec().getNodeName(), jobs.get(0).gpusPerNode(), Integer::sum);
    }
    assertThat(gpusPerNode.values()).allSatisfy(g -> assertThat(g).isLessThanOrEqualTo(8));
  }

  private void scaleToZeroAndExpectNoPlaceholders(String name) {
    scale(name, 0);
    await("pods gone and every placeholder ended")
        .atMost(Duration.ofMinutes(1))
        .until(
            () ->
                kube.pods().inNamespace(ns).list().getItems().isEmpty()
                    && activePlaceholders(ns).isEmpty());
  }

  private List<Pod> boundPods() {
    return kube.pods().inNamespace(ns).list().getItems().stream()
        .filter(p -> p.getSpec().getNodeName() != null)
        .filter(p -> p.getMetadata().getDeletionTimestamp() == null)
        .toList();
  }

  private void deployment(String name) {
    Pod template = inferencePod(name, 2).build();
    Deployment d =
        new DeploymentBuilder()
            .withNewMetadata()
            .withName(name)
            .withNamespace(ns)
            .endMetadata()
            .withNewSpec()
            .withReplicas(0)
            .withNewSelector()
            .withMatchLabels(template.getMetadata().getLabels())
            .endSelector()
            .withNewTemplate()
            .withNewMetadata()
            .withLabels(template.getMetadata().getLabels())
            .endMetadata()
            .withSpec(template.getSpec())
            .endTemplate()
            .endSpec()
            .build();
    kube.apps().deployments().inNamespace(ns).resource(d).create();
  }

  private void scale(String name, int replicas) {
    kube.apps().deployments().inNamespace(ns).withName(name).scale(replicas);
  }
}
