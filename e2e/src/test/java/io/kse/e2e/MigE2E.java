package io.kse.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import io.kse.slurm.SlurmJob;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * MIG devices (issue 46) on a stack started with {@code --mig-gpus 2}: Slurm's last two GPUs of
 * each node are MIG slices of typed GRES, the policy maps the profiles to those types, and the
 * driver publishes each slice with the index Slurm numbers it by. A pod asking a MIG device of a
 * profile gets exactly the slice Slurm gave its placeholder.
 */
class MigE2E extends Scenario {
  static int migGpus;

  @BeforeAll
  static void needsMig() {
    migGpus = Integer.parseInt(E2eStack.shared().envIfSet("KSE_LAB_MIG_GPUS").orElse("0"));
    assumeTrue(migGpus > 0, "needs a stack with MIG GPUs (e2e/cluster/stack --mig-gpus 2)");
  }

  @BeforeEach
  void slicesPublishedAsTheDriverWould() {
    DraGpus.publishMig(kube, stack.gpuNodes(), migGpus);
  }

  Pod migPod(String name, String template) {
    return create(
        new PodBuilder()
            .withNewMetadata()
            .withName(name)
            .withNamespace(ns)
            .withLabels(Map.of("app", "small-model", "kse-test/tier", "shared"))
            .endMetadata()
            .withSpec(DraGpus.podSpec(template)));
  }

  @Test
  void aPodAskingAMigProfileGetsTheSliceSlurmGaveItsPlaceholder() {
    DraGpus.migTemplate(kube, ns, "small", "1g.10gb");
    DraGpus.migTemplate(kube, ns, "big", "3g.40gb");
    for (String[] p : List.of(new String[] {"s-0", "small"}, new String[] {"b-0", "big"})) {
      Pod bound = awaitBound(migPod(p[0], p[1]).getMetadata().getName());
      String node = bound.getSpec().getNodeName();
      SlurmJob job = placeholderOf(bound);
      List<Integer> slurms = job.gpuIndicesOn(node).orElseThrow();
      DeviceRequestAllocationResult r =
          claimOf(bound).getStatus().getAllocation().getDevices().getResults().get(0);
      System.out.printf(
          "[e2e] %s: Slurm job %d holds %s on %s, the claim got %s%n",
          p[0], job.id(), slurms, node, r.getDevice());
      assertThat(slurms).hasSize(1);
      String profile = p[1].equals("small") ? "1g.10gb" : "3g.40gb";
      assertThat(r.getDevice()).as("a MIG slice of %s", profile).contains("-mig-");
      assertThat(published(node, r.getDevice()))
          .as("the slice published with Slurm's index and the profile asked")
          .isEqualTo(slurms.get(0) + " " + profile);
      assertThat(eventReasons(p[0])).contains("GpusAllocatedFromSlurm");
    }
  }

  @Test
  void aProfileThePolicyDoesNotMapIsRefusedOnThePodWithoutAPlaceholder() {
    DraGpus.migTemplate(kube, ns, "odd", "2g.20gb");
    migPod("odd-0", "odd");
    await("the pod told why")
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () ->
                assertThat(events("odd-0"))
                    .anySatisfy(
                        e -> {
                          assertThat(e.getReason()).isEqualTo("PlacementRejected");
                          assertThat(e.getMessage())
                              .contains("profile 2g.20gb")
                              .contains("cluster.migProfiles");
                        }));
    assertThat(activePlaceholders(ns)).isEmpty();
  }

  /** check-slurm finds the MIG types the policy maps, and names one no node has. */
  @Test
  void checkSlurmComparesTheMigTypesWithThePolicy() throws Exception {
    java.nio.file.Path policy = stack.dir().resolve("policy.yaml");
    CheckSlurmRun agreed = checkSlurm(policy);
    assertThat(agreed.exit()).as(agreed.out()).isZero();
    java.nio.file.Path other = java.nio.file.Files.createTempFile("mig", ".yaml");
    java.nio.file.Files.writeString(
        other,
        java.nio.file.Files.readString(policy)
            .replace("1g.10gb: h100_1g.10gb", "1g.10gb: h100_1g.10gb, 2g.20gb: h100_2g.20gb"));
    CheckSlurmRun differs = checkSlurm(other);
    assertThat(differs.exit()).as(differs.out()).isEqualTo(1);
    assertThat(differs.out())
        .contains("cluster.migProfiles.2g.20gb names the Slurm GRES type h100_2g.20gb")
        .contains("no Slurm node has GPUs of that type");
  }

  /** "index profile" of a device the node's ResourceSlice publishes. */
  String published(String node, String device) {
    var slice =
        kube.resources(io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice.class)
            .withName("e2e-gpus-" + node)
            .get();
    var d =
        slice.getSpec().getDevices().stream()
            .filter(x -> x.getName().equals(device))
            .findFirst()
            .orElseThrow();
    return d.getAttributes().get("index").getInt()
        + " "
        + d.getAttributes().get("profile").getString();
  }
}
