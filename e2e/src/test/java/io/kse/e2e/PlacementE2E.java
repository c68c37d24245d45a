package io.kse.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.kse.slurm.JobState;
import io.kse.slurm.SlurmJob;
import io.kse.slurm.testing.LocalSlurmCluster;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** Scenarios 1, 3, 5 and 10, and the manifests on the real API server. */
class PlacementE2E extends Scenario {
  /** Scenario 1: bound to the node Slurm allocated; the placeholder carries the policy's shape. */
  @Test
  void inferencePodIsBoundToTheNodeSlurmAllocated() throws Exception {
    Pod created = create(inferencePod("llm-0", 4));
    assertThat(created.getSpec().getSchedulingGates())
        .as("held by manifests/base/scheduling-gate.yaml until Slurm allocates")
        .extracting(g -> g.getName())
        .containsExactly("kse.io/slurm-allocation");
    Pod bound = awaitBound("llm-0");
    assertThat(bound.getSpec().getSchedulingGates()).isEmpty();

    SlurmJob job = placeholderOf(created);
    assertThat(job.state()).isEqualTo(JobState.RUNNING);
    assertThat(job.nodes()).containsExactly(bound.getSpec().getNodeName());
    assertThat(job.partition()).isEqualTo("inference");
    assertThat(job.gpusPerNode()).isEqualTo(4);
    assertThat(bound.getMetadata().getAnnotations())
        .containsEntry("kse.io/slurm-job", Long.toString(job.id()));
    // bound within KSE_EVENT_QUIET_MS of its submission: one Event says all three steps
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(
            () ->
                assertThat(events("llm-0"))
                    .filteredOn(e -> e.getReason().equals("BoundToSlurmNode"))
                    .singleElement()
                    .extracting(e -> e.getMessage())
                    .asString()
                    .contains(
                        "bound to " + bound.getSpec().getNodeName(),
                        "placeholder submitted as Slurm job " + job.id(),
                        "Slurm job " + job.id() + " allocated node"));
    assertThat(eventReasons("llm-0")).doesNotContain("SlurmJobSubmitted", "AllocatedBySlurm");

    // the decision record explains the same placement
    HttpResponse<String> explain =
        HttpClient.newHttpClient()
            .send(
                HttpRequest.newBuilder(
                        URI.create(stack.extenderUrl() + "/explain/" + ns + "/llm-0"))
                    .build(),
                HttpResponse.BodyHandlers.ofString());
    assertThat(explain.statusCode()).isEqualTo(200);
    assertThat(explain.body()).contains("inference").contains(Long.toString(job.id()));
  }

  /** Scenario 3: a pod deleted while its placeholder waits in Slurm takes the placeholder along. */
  @Test
  void deletingAPendingPodCancelsItsPlaceholder() {
    assumeTrue(stack.managed(), "fills the cluster with sbatch jobs: needs the local Slurm CLI");
    fillEveryNodeInPartition("inference", stack.gpuNodes().size());
    Pod created = create(inferencePod("waits", 8));
    SlurmJob job =
        await()
            .atMost(Duration.ofSeconds(20))
            .until(
                () -> placeholderOf(created.getMetadata().getUid()).orElse(null), j -> j != null);
    await()
        .atMost(Duration.ofSeconds(20))
        .untilAsserted(
            () -> {
              assertThat(slurm.job(job.id()).orElseThrow().state()).isEqualTo(JobState.PENDING);
              assertThat(pod("waits").getSpec().getNodeName()).isNull();
            });

    long deletedAt = System.nanoTime();
    kube.pods().inNamespace(ns).withName("waits").delete();
    await()
        .atMost(Duration.ofSeconds(15))
        .pollInterval(Duration.ofMillis(100))
        .until(() -> slurm.job(job.id()).map(j -> j.state().isFinal()).orElse(true));
    System.out.printf(
        "[e2e] pending pod deleted → placeholder %d ended in %d ms%n",
        job.id(), (System.nanoTime() - deletedAt) / 1_000_000);
  }

  /** Scenario 5: a two-node request for one NVLink domain lands both nodes in one domain. */
  @Test
  void nvlinkDomainRequestLandsInOneDomain() {
    assumeTrue(stack.managed(), "occupies nodes with sbatch jobs: needs the local Slurm CLI");
    // leave one free node in the first domain, so a first-fit choice would straddle two domains
    List<String> nodes = stack.gpuNodes();
    assumeTrue(nodes.size() >= 8, "needs two NVLink domains of 4 nodes");
    for (String n : nodes.subList(0, 3)) {
      sbatch("inference", n);
    }
    Pod created =
        create(
            inferencePod("lws-leader", 8)
                .editMetadata()
                .addToAnnotations(Map.of("kse.io/topology", "nvlink-domain", "kse.io/nodes", "2"))
                .endMetadata());
    Pod bound = awaitBound("lws-leader");

    SlurmJob job = placeholderOf(created);
    assertThat(job.nodes()).hasSize(2).contains(bound.getSpec().getNodeName());
    Set<String> domains =
        job.nodes().stream()
            .map(n -> kube.nodes().withName(n).get().getMetadata().getLabels())
            .map(l -> l.get("kse.io/nvlink-domain"))
            .collect(Collectors.toSet());
    assertThat(domains).as("NVLink domains of %s", job.nodes()).hasSize(1);
    assertThat(job.features()).contains("nvl-0").contains("nvl-1");
  }

  /** Scenario 10: ordinary pods keep their default scheduler, also while the extender is down. */
  @Test
  void defaultSchedulerKeepsWorkingForOrdinaryPods() {
    List<String> cpuNodes = stack.cpuNodes();
    assumeTrue(!cpuNodes.isEmpty(), "needs CPU-only nodes");
    Pod web = kube.pods().inNamespace(ns).resource(ordinaryPod("web-0", cpuNodes.get(0))).create();
    assertThat(web.getSpec().getSchedulingGates())
        .as("other schedulers' pods are never gated")
        .isEmpty();
    assertThat(awaitBound("web-0").getSpec().getNodeName()).isEqualTo(cpuNodes.get(0));

    if (stack.managed()) {
      stack.killExtender();
      try {
        kube.pods().inNamespace(ns).resource(ordinaryPod("web-1", cpuNodes.get(0))).create();
        assertThat(awaitBound("web-1").getSpec().getNodeName()).isEqualTo(cpuNodes.get(0));
      } finally {
        stack.startExtender();
      }
    }
    assertThat(activePlaceholders(ns)).as("no Slurm job for pods of other schedulers").isEmpty();
  }

  /**
   * The manifests pass the real API server's validation and grant the pod's ServiceAccount what the
   * extender and kube-scheduler need, no more (kube-scheduler's own role may delete pods: that is
   * how it preempts).
   */
  @Test
  void manifestsValidateAndGrantLeastPrivilege() throws Exception {
    assumeTrue(stack.managed(), "runs the stack's kubectl");
    String kubectl = stack.env("KSE_E2E_BIN") + "/kubectl";
    Path repo = LocalSlurmCluster.script().getParent().getParent().getParent();
    Map<String, String> env = Map.of("KUBECONFIG", stack.env("KUBECONFIG"));
    String out =
        LocalSlurmCluster.run(
            List.of(
                kubectl,
                "apply",
                "--dry-run=server",
                "-k",
                repo.resolve("manifests/base").toString()),
            Duration.ofSeconds(60),
            env);
    assertThat(out).contains("deployment.apps/kse-scheduler").contains("(server dry run)");
    // every overlay renders and validates: the Knative one once its namespace exists, the
    // monitoring one against the Prometheus Operator's CRDs (the stack installs them)
    kube.namespaces()
        .resource(
            new io.fabric8.kubernetes.api.model.NamespaceBuilder()
                .withNewMetadata()
                .withName("knative-serving")
                .endMetadata()
                .build())
        .createOr(x -> x.update());
    for (String overlay : List.of("knative", "monitoring")) {
      String rendered =
          LocalSlurmCluster.run(
              List.of(
                  kubectl, "kustomize", repo.resolve("manifests/overlays/" + overlay).toString()),
              Duration.ofSeconds(60),
              env);
      Path file = java.nio.file.Files.createTempFile("kse-" + overlay, ".yaml");
      // the monitoring overlay's ServiceMonitor and PrometheusRule too: the stack installs the
      // Prometheus Operator's CRDs
      java.nio.file.Files.writeString(file, rendered);
      try {
        assertThat(
                LocalSlurmCluster.run(
                    List.of(kubectl, "apply", "--dry-run=server", "-f", file.toString()),
                    Duration.ofSeconds(60),
                    env))
            .as(overlay)
            .contains("(server dry run)");
      } finally {
        java.nio.file.Files.deleteIfExists(file); // one per run was left in /tmp
      }
      if (overlay.equals("monitoring")) {
        assertThat(rendered).contains("kind: PrometheusRule").contains("kind: ServiceMonitor");
      }
    }
    assertThat(out)
        .contains("mutatingadmissionpolicy.admissionregistration.k8s.io/kse-scheduling-gate");

    // the extender's own account: exactly what its code calls
    String as = "--as=system:serviceaccount:kube-slurm-extender:kse-extender";
    for (String allowed :
        List.of(
            "create pods/binding",
            "patch pods",
            "patch pods/status",
            "create pods/eviction",
            "delete pods",
            "patch nodes",
            "create events",
            "create tokenreviews",
            "create subjectaccessreviews",
            "patch resourceclaims")) {
      assertThat(canI(kubectl, as, allowed)).as(allowed).isTrue();
    }
    for (String denied :
        List.of(
            "get secrets",
            "create secrets",
            "update pods",
            "update nodes",
            "delete nodes",
            "update persistentvolumes",
            "update persistentvolumeclaims",
            "create resourceclaims",
            "create deployments",
            "update clusterroles")) {
      assertThat(canI(kubectl, as, denied)).as(denied).isFalse();
    }
    // and kube-scheduler's account keeps what kube-scheduler needs
    String scheduler = "--as=system:serviceaccount:kube-slurm-extender:kse-scheduler";
    for (String allowed : List.of("create pods/binding", "update persistentvolumes")) {
      assertThat(canI(kubectl, scheduler, allowed)).as("kse-scheduler: " + allowed).isTrue();
    }
    // and reads the API server's authentication configuration, to check who calls its /metrics
    // (its RoleBinding lives in kube-system: a kustomization-wide namespace once moved it to ours)
    assertThat(
            LocalSlurmCluster.run(
                    List.of(
                        kubectl,
                        "auth",
                        "can-i",
                        scheduler,
                        "-n",
                        "kube-system",
                        "get",
                        "configmaps/extension-apiserver-authentication"),
                    Duration.ofSeconds(30),
                    Map.of("KUBECONFIG", stack.env("KUBECONFIG")))
                .trim())
        .isEqualTo("yes");
  }

  private boolean canI(String kubectl, String as, String verbAndResource) {
    List<String> cmd = new ArrayList<>(List.of(kubectl, "auth", "can-i", as, "-A"));
    String[] words = verbAndResource.split("[ /]");
    cmd.addAll(List.of(words[0], words[1]));
    if (words.length > 2) {
      cmd.add("--subresource=" + words[2]);
    }
    try {
      return LocalSlurmCluster.run(
              cmd, Duration.ofSeconds(30), Map.of("KUBECONFIG", stack.env("KUBECONFIG")))
          .trim()
          .equals("yes");
    } catch (IllegalStateException e) {
      return false; // "no" exits 1
    }
  }

  private io.fabric8.kubernetes.api.model.Pod ordinaryPod(String name, String node) {
    return new PodBuilder()
        .withNewMetadata()
        .withName(name)
        .withNamespace(ns)
        .endMetadata()
        .withNewSpec()
        .withNodeSelector(Map.of("kubernetes.io/hostname", node))
        .withTerminationGracePeriodSeconds(0L)
        .addNewContainer()
        .withName("web")
        .withImage("registry.example/web:1")
        .withNewResources()
        .withRequests(Map.of("cpu", new Quantity("100m")))
        .endResources()
        .endContainer()
        .endSpec()
        .build();
  }

  private void fillEveryNodeInPartition(String partition, int count) {
    List<Long> ids = new ArrayList<>();
    for (String n : stack.gpuNodes().subList(0, count)) {
      ids.add(sbatch(partition, n));
    }
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () -> ids.stream().allMatch(id -> slurm.job(id).map(Scenario::running).orElse(false)));
  }
}
