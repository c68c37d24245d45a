package io.kse.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeFalse;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import io.kse.slurm.GpuShards;
import io.kse.slurm.JobState;
import io.kse.slurm.SlurmJob;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Part of a GPU (issue 46) on a stack started with {@code --gpu-shards 4}: Slurm's GPUs have 4
 * shards each, the DRA driver publishes each GPU with 4 consumable shares, and pods of the tier
 * {@code shared} ask shares through a ResourceClaim. Each pod gets its share of exactly the GPU
 * Slurm put its placeholder's shards on.
 */
class SharedGpuE2E extends Scenario {
  static int shards;

  /** Before any namespace is made: elsewhere the class is skipped at once. */
  @BeforeAll
  static void needsShards() {
    shards = Integer.parseInt(E2eStack.shared().envIfSet("KSE_LAB_GPU_SHARDS").orElse("0"));
    assumeTrue(shards > 0, "needs a stack with GPU shards (e2e/cluster/stack --gpu-shards 4)");
    mixes = E2eStack.shared().envIfSet("KSE_LAB_SLURM").orElse("22.05").equals("22.05");
  }

  /**
   * Slurm 22.05 can give a GPU whole while another job holds shards of it (SchedMD bug 19110, fixed
   * in 23.11.5; seen on this stack): there the extender refuses part of a GPU.
   */
  static boolean mixes;

  static void needsSlurmThatKeepsShardsApart() {
    assumeFalse(mixes, "Slurm 22.05 mixes shards and whole GPUs: part of a GPU is refused there");
  }

  @BeforeEach
  void sharesPublishedAsTheDriverWould() {
    DraGpus.publish(kube, stack.gpuNodes(), shards);
  }

  Pod sharePod(String name, String template) {
    return create(
        new PodBuilder()
            .withNewMetadata()
            .withName(name)
            .withNamespace(ns)
            .withLabels(Map.of("app", "small-model", "kse-test/tier", "shared"))
            .endMetadata()
            .withSpec(DraGpus.podSpec(template)));
  }

  record Share(String node, int gpu, String shareId, long consumed, long jobId) {}

  /** Where the pod's share is, checked against where Slurm says its placeholder's shards are. */
  Share shareOf(Pod bound) {
    String node = bound.getSpec().getNodeName();
    SlurmJob job = placeholderOf(bound);
    GpuShards held =
        job.shardsOn(node)
            .orElseThrow(() -> new AssertionError("Slurm names no shard of job " + job.id()));
    DeviceRequestAllocationResult r =
        claimOf(bound).getStatus().getAllocation().getDevices().getResults().get(0);
    int gpu = DraGpus.index(r.getDevice()).orElseThrow();
    assertThat(held.gpu()).as("Slurm put job %d's shards on one GPU", job.id()).isPresent();
    assertThat(gpu)
        .as("the claim's GPU is the one Slurm put the shards on")
        .isEqualTo(held.gpu().get());
    assertThat(r.getPool()).isEqualTo(node);
    assertThat(r.getShareID()).isNotBlank();
    long consumed = r.getConsumedCapacity().get("shares").getNumericalAmount().longValue();
    assertThat(consumed).isEqualTo(held.total());
    return new Share(node, gpu, r.getShareID(), consumed, job.id());
  }

  @Test
  void fourQuarterGpuPodsGetTheirShareOfExactlyTheGpuSlurmPutTheirShardsOn() {
    needsSlurmThatKeepsShardsApart();
    DraGpus.shareTemplate(kube, ns, "quarter", 1);
    List<String> names = List.of("small-0", "small-1", "small-2", "small-3");
    names.forEach(n -> sharePod(n, "quarter"));
    Map<String, Long> perGpu = new HashMap<>();
    Set<String> shareIds = new HashSet<>();
    for (String n : names) {
      Share s = shareOf(awaitBound(n));
      System.out.printf(
          "[e2e] %s: Slurm job %d's shard on %s GPU %d, share %s%n",
          n, s.jobId(), s.node(), s.gpu(), s.shareId());
      perGpu.merge(s.node() + "/" + s.gpu(), s.consumed(), Long::sum);
      shareIds.add(s.shareId());
      assertThat(eventReasons(n)).contains("GpusAllocatedFromSlurm");
    }
    assertThat(shareIds).as("a share of its own for each pod").hasSize(4);
    assertThat(perGpu.values())
        .as("no GPU gives more shares than it has")
        .allMatch(v -> v <= shards);
  }

  /** Slurm never hands a GPU whole while a pod's shards are on it. */
  @Test
  void wholeGpuTrainingNeverGetsAGpuWithAShareInUse() {
    needsSlurmThatKeepsShardsApart();
    assumeTrue(stack.managed(), "submits training with sbatch: needs the local Slurm CLI");
    DraGpus.shareTemplate(kube, ns, "half", 2);
    Share s = shareOf(awaitBound(sharePod("small", "half").getMetadata().getName()));
    long training = sbatch("training", s.node(), 8, false); // every GPU of that node
    Duration held = Duration.ofSeconds(8);
    long until = System.nanoTime() + held.toNanos();
    while (System.nanoTime() < until) {
      assertThat(slurm.job(training).map(SlurmJob::state))
          .as("training asking all 8 GPUs of %s while GPU %d has a share in use", s.node(), s.gpu())
          .contains(JobState.PENDING);
      sleep(500);
    }
    kube.pods().inNamespace(ns).withName("small").delete();
    await("training starts once the share is given back")
        .atMost(Duration.ofSeconds(60))
        .until(() -> slurm.job(training).map(Scenario::running).orElse(false));
  }

  @Test
  void moreSharesThanAGpuHasAreRefusedOnThePodWithoutAPlaceholder() {
    DraGpus.shareTemplate(kube, ns, "too-much", shards + 1);
    sharePod("greedy", "too-much");
    await("the pod told why")
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () ->
                assertThat(events("greedy"))
                    .anySatisfy(
                        e -> {
                          assertThat(e.getReason()).isEqualTo("PlacementRejected");
                          assertThat(e.getMessage())
                              .contains("asks " + (shards + 1) + " share(s) of a GPU")
                              .contains("a GPU has " + shards);
                        }));
    assertThat(activePlaceholders(ns)).isEmpty();
  }

  /**
   * On Slurm 22.05 a pod asking part of a GPU is told why it gets none, and gets no placeholder.
   */
  @Test
  void onASlurmThatMixesShardsAndWholeGpusPartOfAGpuIsRefusedByName() {
    assumeTrue(mixes, "Slurm 23.11.5 and later keep shards and whole GPUs apart");
    DraGpus.shareTemplate(kube, ns, "quarter", 1);
    sharePod("small", "quarter");
    await("the pod told why")
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () ->
                assertThat(events("small"))
                    .anySatisfy(
                        e -> {
                          assertThat(e.getReason()).isEqualTo("PlacementRejected");
                          assertThat(e.getMessage())
                              .contains("Slurm 22.05")
                              .contains("SchedMD bug 19110")
                              .contains("ask whole GPUs");
                        }));
    assertThat(activePlaceholders(ns)).isEmpty();
  }

  /** check-slurm finds Slurm's shards as the policy says, and names a policy that differs. */
  @Test
  void checkSlurmComparesTheShardsPerGpuWithThePolicy() throws Exception {
    java.nio.file.Path policy = stack.dir().resolve("policy.yaml");
    CheckSlurmRun agreed = checkSlurm(policy);
    if (mixes) {
      assertThat(agreed.exit()).as(agreed.out()).isEqualTo(1);
      assertThat(agreed.out())
          .contains("DIFF cluster.gpuShares: Slurm 22.05")
          .contains("bug 19110");
      return;
    }
    assertThat(agreed.exit()).as(agreed.out()).isZero();
    java.nio.file.Path other = java.nio.file.Files.createTempFile("shares", ".yaml");
    java.nio.file.Files.writeString(
        other,
        java.nio.file.Files.readString(policy)
            .replace("perGpu: " + shards, "perGpu: " + (shards * 2)));
    CheckSlurmRun differs = checkSlurm(other);
    assertThat(differs.exit()).as(differs.out()).isEqualTo(1);
    assertThat(differs.out())
        .contains("shards per GPU, the policy " + (shards * 2) + " (cluster.gpuShares.perGpu)");
  }

  static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
