package io.kse.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.kse.slurm.JobState;
import io.kse.slurm.PlaceholderTag;
import io.kse.slurm.SlurmJob;
import io.kse.slurm.testing.LocalSlurmCluster;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Two Kubernetes clusters, each with its own extender, on one Slurm (issue 15): each keeps its own
 * pods' placeholders and never touches the other's — before, each extender's orphan sweep cancelled
 * every placeholder whose pod its own API server lacked.
 */
class SharedSlurmE2E extends Scenario {
  static final Path OTHER = Path.of("/tmp/kse-e2e-other");

  @Test
  void twoExtendersOnOneSlurmEachKeepTheirOwnPodsJobs() throws Exception {
    assumeTrue(stack.managed(), "starts a second local stack on this stack's Slurm");
    Path stackScript =
        LocalSlurmCluster.script().getParent().getParent().getParent().resolve("e2e/cluster/stack");
    Path slurmDir = Path.of(stack.env("KSE_LAB_DIR"));
    LocalSlurmCluster.run(
        List.of(
            stackScript.toString(),
            "start",
            "--dir",
            OTHER.toString(),
            "--port-offset",
            "300",
            "--nodes",
            Integer.toString(stack.gpuNodes().size()),
            "--cpu-nodes",
            "0",
            "--slurm-from",
            slurmDir.toString()),
        Duration.ofMinutes(5),
        Map.of());
    try (KubernetesClient other =
        new KubernetesClientBuilder()
            .withConfig(Config.fromKubeconfig(Files.readString(OTHER.resolve("admin.kubeconfig"))))
            .build()) {
      other
          .namespaces()
          .resource(new NamespaceBuilder().withNewMetadata().withName(ns).endMetadata().build())
          .create();
      await()
          .atMost(Duration.ofSeconds(30))
          .until(() -> other.serviceAccounts().inNamespace(ns).withName("default").get() != null);

      // the same namespace and pod name in both clusters
      Pod mine = create(inferencePod("llm-0", 8));
      Pod theirs = other.pods().inNamespace(ns).resource(inferencePod("llm-0", 8).build()).create();
      awaitBound("llm-0");
      await("the other cluster's pod bound")
          .atMost(BIND_TIMEOUT)
          .until(
              () ->
                  other.pods().inNamespace(ns).withName("llm-0").get().getSpec().getNodeName()
                      != null);
      SlurmJob myJob = placeholderOf(mine);
      SlurmJob theirJob = placeholderOf(theirs);
      assertThat(myJob.id()).isNotEqualTo(theirJob.id());
      String myCluster = myJob.placeholder().flatMap(PlaceholderTag::cluster).orElseThrow();
      String theirCluster = theirJob.placeholder().flatMap(PlaceholderTag::cluster).orElseThrow();
      assertThat(myCluster).as("each extender names its own cluster").isNotEqualTo(theirCluster);

      // several reconcile passes of both, and a restart of ours (a takeover re-checks every job)
      Thread.sleep(5_000);
      stack.killExtender();
      stack.startExtender();
      Thread.sleep(5_000);
      assertThat(slurm.job(theirJob.id()).map(SlurmJob::state)).contains(JobState.RUNNING);
      assertThat(slurm.job(myJob.id()).map(SlurmJob::state)).contains(JobState.RUNNING);

      // each cluster's pod gone takes exactly its own job along
      kube.pods().inNamespace(ns).withName("llm-0").withGracePeriod(0).delete();
      await("our job cancelled")
          .atMost(Duration.ofSeconds(20))
          .until(() -> slurm.job(myJob.id()).map(j -> j.state().isFinal()).orElse(true));
      assertThat(slurm.job(theirJob.id()).map(SlurmJob::state)).contains(JobState.RUNNING);
      other.pods().inNamespace(ns).withName("llm-0").withGracePeriod(0).delete();
      await("their job cancelled by their extender")
          .atMost(Duration.ofSeconds(20))
          .until(() -> slurm.job(theirJob.id()).map(j -> j.state().isFinal()).orElse(true));
    } finally {
      LocalSlurmCluster.run(
          List.of(stackScript.toString(), "stop", "--dir", OTHER.toString(), "--purge"),
          Duration.ofMinutes(2),
          Map.of());
    }
  }
}
