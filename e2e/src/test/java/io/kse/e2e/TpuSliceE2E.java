package io.kse.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.kse.slurm.JobState;
import io.kse.slurm.SlurmJob;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * TPU slices (issue 45) on a stack started with {@code --tpu-blocks 4,4,8} (Slurm 24.11/26.05):
 * hosts tpu-host-0..15 in topology/block blocks slice-0 (hosts 0-3, 2x2x4), slice-1 (4-7, 2x2x4)
 * and slice-2 (8-15, 2x4x4), the kwok nodes labelled as GKE labels TPU hosts (node pool = slice). A
 * LeaderWorkerSet asking google.com/tpu is placed on whole slices only, member i on the job's i-th
 * host.
 */
class TpuSliceE2E extends Scenario {
  static final String NODEPOOL = "cloud.google.com/gke-nodepool";

  /** Before any namespace is made: elsewhere the class is skipped at once. */
  @BeforeAll
  static void needsTpuHosts() {
    assumeTrue(
        !E2eStack.shared().envIfSet("KSE_LAB_TPU_BLOCKS").orElse("").isBlank(),
        "needs a stack with TPU slices (e2e/cluster/stack start --tpu-blocks 4,4,8)");
  }

  /** A LeaderWorkerSet of {@code replicas} groups of {@code size} TPU hosts of {@code topology}. */
  void tpuServer(String name, int replicas, int size, String topology) {
    tpuServer(name, replicas, size, topology, "{}");
  }

  /** The same, with the LeaderWorkerSet's own annotations (e.g. exclusive-topology). */
  void tpuServer(String name, int replicas, int size, String topology, String annotations) {
    String yaml =
        """
        apiVersion: leaderworkerset.x-k8s.io/v1
        kind: LeaderWorkerSet
        metadata: {name: %s, namespace: %s, annotations: %s}
        spec:
          replicas: %d
          leaderWorkerTemplate:
            size: %d
            restartPolicy: None
            workerTemplate:
              spec:
                schedulerName: slurm-inference
                terminationGracePeriodSeconds: 0
                nodeSelector:
                  cloud.google.com/gke-tpu-accelerator: tpu-v5p-slice
                  cloud.google.com/gke-tpu-topology: "%s"
                containers:
                  - name: server
                    image: registry.example/jetstream:1
                    resources: {limits: {google.com/tpu: "4"}}
        """
            .formatted(name, ns, annotations, replicas, size, topology);
    kube.genericKubernetesResources("leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet")
        .inNamespace(ns)
        .resource(Serialization.unmarshal(yaml, GenericKubernetesResource.class))
        .create();
  }

  String sliceOf(String node) {
    return kube.nodes().withName(node).get().getMetadata().getLabels().get(NODEPOOL);
  }

  /**
   * Every group's job: RUNNING on {@code hostsPerSlice}-host runs that are each one whole slice
   * (every host of that slice, no other), member i on the job's i-th host; no slice held twice.
   */
  Set<String> assertWholeSlices(List<Pod> pods, int hostsPerSlice) {
    Set<String> slicesHeld = new HashSet<>();
    for (SlurmJob j : groupJobs().values()) {
      assertThat(j.state()).isEqualTo(JobState.RUNNING);
      for (int s = 0; s < j.nodes().size(); s += hostsPerSlice) {
        List<String> segment = j.nodes().subList(s, s + hostsPerSlice);
        Set<String> slice = segment.stream().map(this::sliceOf).collect(Collectors.toSet());
        assertThat(slice).as("job %d's hosts %s are one slice", j.id(), segment).hasSize(1);
        assertThat(slicesHeld.add(slice.iterator().next()))
            .as("slice %s held once", slice)
            .isTrue();
        long sliceSize =
            kube.nodes().withLabel(NODEPOOL, slice.iterator().next()).list().getItems().size();
        assertThat(sliceSize).as("the whole of slice %s", slice).isEqualTo(hostsPerSlice);
      }
      String group = j.placeholder().orElseThrow().group().orElseThrow(); // lws/<name>/<index>
      String index = group.substring(group.lastIndexOf('/') + 1);
      for (Pod p : pods) {
        Map<String, String> l = p.getMetadata().getLabels();
        if (index.equals(l.get("leaderworkerset.sigs.k8s.io/group-index"))
            && group.contains("/" + l.get("leaderworkerset.sigs.k8s.io/name") + "/")) {
          int worker =
              Integer.parseInt(l.getOrDefault("leaderworkerset.sigs.k8s.io/worker-index", "0"));
          assertThat(p.getSpec().getNodeName())
              .as("member %d of %s on the job's host %d", worker, group, worker)
              .isEqualTo(j.nodes().get(worker));
        }
      }
    }
    return slicesHeld;
  }

  /**
   * As GKE's TPU examples write it: LWS exclusive-topology on the node pool, so LWS creates the
   * workers once the leader is bound and keeps them in the leader's pool (pod affinity); the job
   * asks the whole slice from the leader alone.
   */
  @Test
  void aFourHostSliceServerIsPlacedWholeOnOneBlock() {
    tpuServer(
        "jetstream",
        1,
        4,
        "2x2x4",
        "{leaderworkerset.sigs.k8s.io/exclusive-topology: " + NODEPOOL + "}");
    List<Pod> bound = awaitAllBound(4);
    Set<String> slices = assertWholeSlices(bound, 4);
    assertThat(slices).hasSize(1).isSubsetOf("slice-0", "slice-1");
    SlurmJob job = groupJobs().values().iterator().next();
    assertThat(job.gresDetail())
        .as("the chips Slurm gave on each host")
        .hasSize(4)
        .allSatisfy(g -> assertThat(g).contains("tpu"));
  }

  /**
   * Two 4-host servers take the two 2x2x4 slices; a third waits, told why, though the 2x4x4 slice
   * has 8 free hosts: a slice is never carved from a slice of another topology.
   */
  @Test
  void twoSlicesGoOnTwoBlocksAndAThirdWaitsRatherThanTakeHalfOfABiggerSlice() {
    tpuServer("a", 2, 4, "2x2x4");
    assertThat(assertWholeSlices(awaitAllBound(8), 4))
        .containsExactlyInAnyOrder("slice-0", "slice-1");
    tpuServer("c", 1, 4, "2x2x4");
    await("the third server's members told they wait")
        .atMost(Duration.ofSeconds(45))
        .untilAsserted(
            () -> {
              List<Pod> third =
                  pods().stream().filter(p -> p.getMetadata().getName().startsWith("c-")).toList();
              assertThat(third).hasSize(4);
              for (Pod p : third) {
                assertThat(events(p.getMetadata().getName()))
                    .anySatisfy(e -> assertThat(e.getMessage()).contains("waiting for Slurm job"));
              }
            });
    assertThat(pods().stream().filter(p -> p.getMetadata().getName().startsWith("c-")))
        .allMatch(p -> p.getSpec().getNodeName() == null);
    SlurmJob waiting = groupJobs().get("lws/c/0");
    assertThat(waiting.state()).isEqualTo(JobState.PENDING);
    assertThat(waiting.nodes()).isEmpty();
  }

  @Test
  void aMultisliceOfTwoByFourHostsIsOneJobOnTwoWholeSlices() {
    tpuServer("multi", 1, 8, "2x2x4");
    List<Pod> bound = awaitAllBound(8);
    assertThat(groupJobs()).hasSize(1);
    assertThat(assertWholeSlices(bound, 4)).containsExactlyInAnyOrder("slice-0", "slice-1");
  }

  /**
   * The 8-host slice is one segment of 8 in a topology whose base block (BlockSizes) is 4: Slurm
   * 26.05 places it on the whole 8-host block; 24.11 refuses any segment larger than the base block
   * ("segment (8) > bblock_node_cnt (4) is not supported"), and the pods are told so.
   */
  @Test
  void anEightHostSliceTakesTheWholeBiggerBlockWhereSlurmAllowsIt() {
    tpuServer("big", 1, 8, "2x4x4");
    if (!stack.env("KSE_LAB_SLURM").equals("24.11")) {
      assertThat(assertWholeSlices(awaitAllBound(8), 8)).containsExactly("slice-2");
      return;
    }
    awaitEveryMemberRefused(8, "Requested topology configuration is not available");
    assertThat(activePlaceholders(ns)).isEmpty();
  }

  /**
   * One host of each 2x2x4 slice busy with work the server may not preempt: the server waits and is
   * never placed across slices; the work on slice-1 turned into preemptible training, the server
   * preempts exactly it and takes slice-1 whole.
   */
  @Test
  void aSliceWaitsWhileOnlyFragmentsAreFreeAndPreemptsTrainingHoldingOneBlock() {
    assumeTrue(stack.managed(), "fills hosts with sbatch jobs: needs the local Slurm CLI");
    long onSlice0 = sbatch("inference", "tpu-host-1", "tpu:4", true);
    long onSlice1 = sbatch("inference", "tpu-host-5", "tpu:4", true);
    awaitRunning(onSlice0, onSlice1);
    tpuServer("srv", 1, 4, "2x2x4");
    await("the server's job pends")
        .atMost(Duration.ofSeconds(45))
        .until(
            () ->
                groupJobs().containsKey("lws/srv/0")
                    && pods().size() == 4
                    && events(pods().get(0).getMetadata().getName()).stream()
                        .anyMatch(e -> e.getMessage().contains("waiting for Slurm job")));
    assertThat(groupJobs().get("lws/srv/0").nodes()).isEmpty();
    assertThat(pods()).allMatch(p -> p.getSpec().getNodeName() == null);

    stack.slurmCluster().cli("scancel", Long.toString(onSlice1));
    long training = sbatch("training", "tpu-host-5", "tpu:4", true);
    List<Pod> bound = awaitAllBound(4);
    assertThat(assertWholeSlices(bound, 4)).containsExactly("slice-1");
    assertThat(slurm.job(training).map(Scenario::running).orElse(false))
        .as("the training job on slice-1 was preempted")
        .isFalse();
    assertThat(slurm.job(onSlice0).map(Scenario::running).orElse(false))
        .as("the inference job on slice-0 still runs")
        .isTrue();
  }

  /**
   * A host of a running slice fails (Slurm sets it DOWN and ends the job): the group is handled as
   * any group losing a member — every member evicted, the recreated members placed whole on the
   * other 2x2x4 slice by a new job, never on the failed host.
   */
  @Test
  void aSliceWhoseHostFailsMovesWholeToTheOtherSlice() throws Exception {
    assumeTrue(stack.managed(), "stops a slurmd: needs the local Slurm cluster");
    tpuServer("moving", 1, 4, "2x2x4");
    List<Pod> first = awaitAllBound(4);
    SlurmJob job = groupJobs().get("lws/moving/0");
    String failing = job.nodes().get(2);
    String before = sliceOf(failing);
    Set<String> firstUids =
        first.stream().map(p -> p.getMetadata().getUid()).collect(Collectors.toSet());
    Thread.sleep(2_000); // not within the job's first second (see OutageE2E)
    whileSlurmNodeIsDown(
        failing,
        () ->
            await("the group placed again, whole, on the other slice")
                .atMost(Duration.ofSeconds(90))
                .pollInterval(Duration.ofMillis(500))
                .untilAsserted(
                    () -> {
                      List<Pod> now = pods();
                      assertThat(now).hasSize(4);
                      assertThat(now)
                          .allSatisfy(
                              p -> {
                                assertThat(firstUids).doesNotContain(p.getMetadata().getUid());
                                assertThat(p.getSpec().getNodeName()).isNotNull();
                              });
                      SlurmJob again = groupJobs().get("lws/moving/0");
                      assertThat(again.id()).isNotEqualTo(job.id());
                      assertThat(again.nodes()).doesNotContain(failing);
                      assertThat(assertWholeSlices(now, 4)).doesNotContain(before);
                    }));
  }

  /** Bad input is refused on the pod (Event and condition), and no placeholder is submitted. */
  @Test
  void aSliceTopologyThatDoesNotParseIsRefusedOnThePodWithoutAPlaceholder() {
    tpuServer("bad", 1, 4, "2x2xq");
    awaitEveryMemberRefused(4, "cloud.google.com/gke-tpu-topology=2x2xq", "not a slice topology");
    assertThat(activePlaceholders(ns)).isEmpty();
    assertThat(pods()).allMatch(p -> p.getSpec().getNodeName() == null);
  }

  /**
   * A TPU host relabelled in Kubernetes as a host of another slice topology: the extender tells it
   * on the node (Warning Event TopologyDrift, naming both sides) and {@code check-slurm
   * --kubernetes} lists it; the label put back, check-slurm finds nothing.
   */
  @Test
  void aHostRelabelledAgainstSlurmIsFoundByTheExtenderAndByCheckSlurm() throws Exception {
    String host = "tpu-host-3";
    String topology = "cloud.google.com/gke-tpu-topology";
    kube.nodes()
        .withName(host)
        .edit(
            n -> {
              n.getMetadata().getLabels().put(topology, "2x4x4");
              return n;
            });
    try {
      await("a TopologyDrift Event on " + host)
          .atMost(Duration.ofSeconds(90))
          .pollInterval(Duration.ofSeconds(2))
          .untilAsserted(
              () ->
                  assertThat(
                          kube.v1()
                              .events()
                              .inNamespace("default")
                              .withField("involvedObject.name", host)
                              .list()
                              .getItems())
                      .anySatisfy(
                          e -> {
                            assertThat(e.getReason()).isEqualTo("TopologyDrift");
                            assertThat(e.getMessage())
                                .contains("gke-tpu-topology=2x4x4")
                                .contains("Slurm's slice feature tpu-v5p-2x2x4");
                          }));
      CheckSlurmRun drift = checkSlurm(stack.dir().resolve("policy.yaml"), "--kubernetes");
      assertThat(drift.exit()).as(drift.out()).isEqualTo(1);
      assertThat(drift.out())
          .contains("DIFF node " + host + ": Kubernetes labels")
          .contains("(Slurm feature tpu-v5p-2x4x4), Slurm's slice feature tpu-v5p-2x2x4");
    } finally {
      kube.nodes()
          .withName(host)
          .edit(
              n -> {
                n.getMetadata().getLabels().put(topology, "2x2x4");
                return n;
              });
    }
    CheckSlurmRun agreed = checkSlurm(stack.dir().resolve("policy.yaml"), "--kubernetes");
    assertThat(agreed.exit()).as(agreed.out()).isZero();
  }

  /** {@code n} members exist and each is told PlacementRejected with all of {@code says}. */
  void awaitEveryMemberRefused(int n, String... says) {
    await("every member refused")
        .atMost(Duration.ofSeconds(45))
        .untilAsserted(
            () -> {
              assertThat(pods()).hasSize(n);
              for (Pod p : pods()) {
                assertThat(events(p.getMetadata().getName()))
                    .anySatisfy(
                        e -> {
                          assertThat(e.getReason()).isEqualTo("PlacementRejected");
                          assertThat(e.getMessage()).contains(says);
                        });
              }
            });
  }

  void awaitRunning(long... ids) {
    List<Long> all = new ArrayList<>();
    for (long id : ids) {
      all.add(id);
    }
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () -> all.stream().allMatch(id -> slurm.job(id).map(Scenario::running).orElse(false)));
  }
}
