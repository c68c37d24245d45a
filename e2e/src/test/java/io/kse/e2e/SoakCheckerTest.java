package io.kse.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.kse.e2e.SoakChecker.Finding;
import io.kse.e2e.SoakChecker.Invariant;
import io.kse.slurm.PlaceholderTag;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The soak's invariants on hand-made pods and squeue lines: each one can fail. */
class SoakCheckerTest {
  private static final Set<String> NS = Set.of("soak");

  @Test
  void squeueLinesAreReadWithTheirTagsNodesAndGpus() {
    List<SlurmTruth.Job> jobs =
        SlurmTruth.parse(
            "7|RUNNING|gpu-node-[0-1]|kse|gres/gpu:h100:4|kse:v1 pod=soak/g0-0 uid=u1 group=kse/g0"
                + " size=2\n"
                + "8|PENDING||root|gres:gpu:8|\n"
                + "9_[1-3]|PENDING||root|N/A|\n");
    assertThat(jobs).hasSize(2);
    assertThat(jobs.get(0).nodes()).containsExactly("gpu-node-0", "gpu-node-1");
    assertThat(jobs.get(0).gpusPerNode()).isEqualTo(4);
    assertThat(jobs.get(0).tag()).map(PlaceholderTag::key).contains("group:soak/kse/g0");
    assertThat(jobs.get(1).tag()).isEmpty();
    assertThat(jobs.get(1).gpusPerNode()).isEqualTo(8);
  }

  @Test
  void aBoundPodWithoutARunningJobOnItsNodeIsAFinding() {
    Pod p = pod("a", "u1", "gpu-node-0", Map.of(), Map.of());
    assertThat(invariants(List.of(p), List.of())).containsExactly(Invariant.BOUND_POD_HAS_ITS_JOB);
    assertThat(invariants(List.of(p), List.of(job(1, "RUNNING", "gpu-node-1", tag("a", "u1")))))
        .containsExactly(Invariant.BOUND_POD_HAS_ITS_JOB);
    assertThat(invariants(List.of(p), List.of(job(1, "RUNNING", "gpu-node-0", tag("a", "u1")))))
        .isEmpty();
  }

  @Test
  void aServingPodSharingItsNodeWithAnotherJobIsAFinding() {
    Pod p = pod("s", "u1", "gpu-node-0", Map.of(SoakChecker.TIER_LABEL, "serving"), Map.of());
    List<SlurmTruth.Job> jobs =
        List.of(
            job(1, "RUNNING", "gpu-node-0", tag("s", "u1")),
            job(2, "RUNNING", "gpu-node-0", Optional.empty()));
    assertThat(invariants(List.of(p), jobs)).containsExactly(Invariant.WHOLE_NODE_NOT_SHARED);
  }

  @Test
  void orphansDoublesAndGroupMembersTogetherAreFindings() {
    assertThat(invariants(List.of(), List.of(job(1, "PENDING", "", tag("gone", "u9")))))
        .containsExactly(Invariant.NO_ORPHAN_PLACEHOLDER);
    Pod waiting = pod("w", "u2", null, Map.of(), Map.of());
    assertThat(
            invariants(
                List.of(waiting),
                List.of(
                    job(1, "PENDING", "", tag("w", "u2")), job(2, "PENDING", "", tag("w", "u2")))))
        .containsExactly(Invariant.ONE_PLACEHOLDER_PER_PLACEMENT);
    Map<String, String> g = Map.of(SoakChecker.GROUP, "g0");
    Optional<PlaceholderTag> gt =
        Optional.of(
            new PlaceholderTag("soak", "m0", "u3", Optional.of("kse/g0"), 2, Optional.empty()));
    assertThat(
            invariants(
                List.of(
                    pod("m0", "u3", "gpu-node-0", Map.of(), g),
                    pod("m1", "u4", "gpu-node-0", Map.of(), g)),
                List.of(job(1, "RUNNING", "gpu-node-[0-1]", gt))))
        .containsExactly(Invariant.GROUP_MEMBERS_APART);
  }

  @Test
  void scontrolsDetailGivesEachJobItsGpuIndicesPerNode() {
    String detail =
        """
        JobId=7 JobName=kse-soak-g0
           UserId=kse(999) GroupId=kse(999) MCS_label=N/A
           JobState=RUNNING Reason=None Dependency=(null)
           NodeList=gpu-node-[0-2]
           JOB_GRES=gpu:h100:12
             Nodes=gpu-node-[0-1] CPU_IDs=0 Mem=0 GRES=gpu:h100:4(IDX:0-3)
             Nodes=gpu-node-2 CPU_IDs=0 Mem=0 GRES=gpu:h100:4(IDX:2,4-6)
           MinCPUsNode=1 MinMemoryNode=0 MinTmpDiskNode=0

        JobId=8 JobName=training
           JobState=PENDING Reason=Resources Dependency=(null)
        JobId=9 JobName=cpu
             Nodes=cpu-node-0 CPU_IDs=0-1 Mem=0 GRES=
        """;
    Map<Long, Map<String, List<Integer>>> got = SlurmTruth.gpuIndices(detail);
    assertThat(got).containsOnlyKeys(7L);
    assertThat(got.get(7L))
        .containsEntry("gpu-node-0", List.of(0, 1, 2, 3))
        .containsEntry("gpu-node-1", List.of(0, 1, 2, 3))
        .containsEntry("gpu-node-2", List.of(2, 4, 5, 6));
  }

  @Test
  void aClaimedGpuOutsideThePlaceholderOrHeldByAnotherJobIsAFinding() {
    Pod p =
        claimingTwo(
            pod("d", "u1", "gpu-node-0", Map.of(SoakChecker.TIER_LABEL, "serving"), Map.of()));
    SlurmTruth.Job own =
        job(1, "RUNNING", "gpu-node-0", tag("d", "u1"))
            .withGpuIndices(Map.of("gpu-node-0", List.of(2, 3)));
    SlurmTruth.Job training =
        job(2, "RUNNING", "gpu-node-0", Optional.empty())
            .withGpuIndices(Map.of("gpu-node-0", List.of(0, 1, 4, 5)));
    var claimedRight = List.of(new SoakChecker.ClaimedGpus("u1", "d-gpus", List.of(2, 3)));
    assertThat(invariants(List.of(p), List.of(own, training), claimedRight))
        .as("a DRA pod shares its node with training on other GPUs")
        .isEmpty();
    var claimedWrong = List.of(new SoakChecker.ClaimedGpus("u1", "d-gpus", List.of(1, 2)));
    assertThat(invariants(List.of(p), List.of(own, training), claimedWrong))
        .containsExactly(Invariant.GPU_HAS_ONE_OWNER);
    assertThat(invariants(List.of(p), List.of(own), claimedWrong))
        .as("GPU 1 is not one Slurm gave the placeholder")
        .containsExactly(Invariant.GPU_HAS_ONE_OWNER);
  }

  /**
   * A pod being deleted still holds its GPUs until its containers stop: a job on them meanwhile is
   * a second owner, whatever ended the placeholder (here COMPLETING: the hold); once the pod has
   * finished it holds nothing.
   */
  @Test
  void aPodStillStoppingOwnsItsGpusUntilItHasFinished() {
    Pod stopping =
        new PodBuilder(claimingTwo(pod("d", "u1", "gpu-node-0", Map.of(), Map.of())))
            .editMetadata()
            .withDeletionTimestamp("2026-11-28T22:00:00Z")
            .endMetadata()
            .build();
    SlurmTruth.Job held =
        job(1, "COMPLETING", "gpu-node-0", tag("d", "u1"))
            .withGpuIndices(Map.of("gpu-node-0", List.of(2, 3)));
    SlurmTruth.Job next =
        job(2, "RUNNING", "gpu-node-0", Optional.empty())
            .withGpuIndices(Map.of("gpu-node-0", List.of(2, 3)));
    var claimed = List.of(new SoakChecker.ClaimedGpus("u1", "d-gpus", List.of(2, 3)));
    assertThat(invariants(List.of(stopping), List.of(held), claimed))
        .as("held while it stops: nothing else there")
        .isEmpty();
    assertThat(invariants(List.of(stopping), List.of(held, next), claimed))
        .containsExactly(Invariant.GPU_HAS_ONE_OWNER);
    Pod finished =
        new PodBuilder(stopping).withNewStatus().withPhase("Succeeded").endStatus().build();
    assertThat(invariants(List.of(finished), List.of(next), claimed))
        .as("its containers have stopped")
        .isEmpty();
  }

  @Test
  void scontrolsDetailGivesEachJobItsShardsPerGpuInEveryFormSeenLive() {
    String detail =
        """
        JobId=7 JobName=kse-soak-a
             Nodes=gpu-node-0 CPU_IDs=0 Mem=0 GRES=shard:2(2/4,0/4,0/4,0/4,0/4,0/4,0/4,0/4)
        JobId=8 JobName=kse-soak-b
             Nodes=gpu-node-1 CPU_IDs=0 Mem=0 GRES=shard:1(IDX:3)
        JobId=9 JobName=training
             Nodes=gpu-node-1 CPU_IDs=0 Mem=0 GRES=gpu:h100:2(IDX:0-1)
        """;
    var got = SlurmTruth.shards(detail);
    assertThat(got).containsOnlyKeys(7L, 8L);
    assertThat(got.get(7L)).containsEntry("gpu-node-0", Map.of(0, 2));
    assertThat(got.get(8L)).containsEntry("gpu-node-1", Map.of(3, 1));
    assertThat(SlurmTruth.gpuIndices(detail)).containsOnlyKeys(9L);
  }

  /** Issue 46: a pod's share is on a GPU its placeholder's shards are on, and nobody's whole. */
  @Test
  void aShareOutsideThePlaceholdersShardsOrOnAGpuHeldWholeIsAFinding() {
    Pod p = claimingTwo(pod("s", "u1", "gpu-node-0", Map.of(), Map.of()));
    SlurmTruth.Job own =
        job(1, "RUNNING", "gpu-node-0", tag("s", "u1"))
            .withShards(Map.of("gpu-node-0", Map.of(2, 1)));
    SlurmTruth.Job neighbour =
        job(2, "RUNNING", "gpu-node-0", Optional.empty())
            .withShards(Map.of("gpu-node-0", Map.of(2, 3)));
    SlurmTruth.Job training =
        job(3, "RUNNING", "gpu-node-0", Optional.empty())
            .withGpuIndices(Map.of("gpu-node-0", List.of(0, 1)));
    var onTwo = List.of(new SoakChecker.ClaimedGpus("u1", "s-share", List.of(), Map.of(2, 1L)));
    assertThat(invariants(List.of(p), List.of(own, neighbour, training), onTwo))
        .as("the placeholder's and another job's shards on GPU 2, training on 0 and 1")
        .isEmpty();
    var onOne = List.of(new SoakChecker.ClaimedGpus("u1", "s-share", List.of(), Map.of(1, 1L)));
    assertThat(invariants(List.of(p), List.of(own, training), onOne))
        .as("GPU 1 is training's whole, and not where Slurm put the pod's shard")
        .containsExactly(Invariant.GPU_HAS_ONE_OWNER);
    var wholeTwo = List.of(new SoakChecker.ClaimedGpus("u1", "s-gpus", List.of(2)));
    SlurmTruth.Job ownWhole =
        job(1, "RUNNING", "gpu-node-0", tag("s", "u1"))
            .withGpuIndices(Map.of("gpu-node-0", List.of(2)));
    assertThat(invariants(List.of(p), List.of(ownWhole, neighbour), wholeTwo))
        .as("a pod's whole GPU with another job's shards on it")
        .containsOnly(Invariant.GPU_HAS_ONE_OWNER);
  }

  @Test
  void slurmGivingAGpuWholeWhileShardsOfItAreHeldIsAFinding() {
    SlurmTruth.Job shards =
        job(1, "RUNNING", "gpu-node-0", Optional.empty())
            .withShards(Map.of("gpu-node-0", Map.of(4, 2)));
    SlurmTruth.Job whole =
        job(2, "RUNNING", "gpu-node-0", Optional.empty())
            .withGpuIndices(Map.of("gpu-node-0", List.of(3, 4)));
    assertThat(SoakChecker.wholeBesideShards(List.of(shards, whole)))
        .extracting(Finding::key)
        .containsExactly("gpu-node-0 GPU 4");
    SlurmTruth.Job elsewhere =
        job(2, "RUNNING", "gpu-node-0", Optional.empty())
            .withGpuIndices(Map.of("gpu-node-0", List.of(0, 1)));
    assertThat(SoakChecker.wholeBesideShards(List.of(shards, elsewhere))).isEmpty();
    assertThat(
            SoakChecker.wholeBesideShards(List.of(shards, job(2, "PENDING", "", Optional.empty()))))
        .isEmpty();
  }

  @Test
  void theSharesOnAGpuNeverExceedItsShardsStoppingPodsIncluded() {
    Pod a = claimingTwo(pod("a", "u1", "gpu-node-0", Map.of(), Map.of()));
    Pod b =
        new PodBuilder(claimingTwo(pod("b", "u2", "gpu-node-0", Map.of(), Map.of())))
            .editMetadata()
            .withDeletionTimestamp("2026-11-28T22:00:00Z")
            .endMetadata()
            .build();
    var claims =
        List.of(
            new SoakChecker.ClaimedGpus("u1", "a-share", List.of(), Map.of(0, 3L)),
            new SoakChecker.ClaimedGpus("u2", "b-share", List.of(), Map.of(0, 2L)));
    assertThat(SoakChecker.sharesWithinGpus(List.of(a, b), claims, NS, 4))
        .extracting(Finding::invariant, Finding::key)
        .containsExactly(
            org.assertj.core.api.Assertions.tuple(
                Invariant.GPU_SHARES_WITHIN_GPU, "gpu-node-0 GPU 0"));
    assertThat(SoakChecker.sharesWithinGpus(List.of(a, b), claims, NS, 5)).isEmpty();
    Pod bFinished = new PodBuilder(b).withNewStatus().withPhase("Succeeded").endStatus().build();
    assertThat(SoakChecker.sharesWithinGpus(List.of(a, bFinished), claims, NS, 4))
        .as("a pod whose containers stopped holds no share")
        .isEmpty();
  }

  @Test
  void anAllocatedShareClaimGivesItsPodTheSharesOfItsDevice() {
    ResourceClaim claim =
        Serialization.unmarshal(
            """
            apiVersion: resource.k8s.io/v1
            kind: ResourceClaim
            metadata: {name: s-share, namespace: soak}
            spec:
              devices:
                requests:
                  - name: gpu
                    exactly:
                      deviceClassName: gpu.nvidia.com
                      capacity: {requests: {shares: "1"}}
            status:
              allocation:
                devices:
                  results:
                    - request: gpu
                      driver: gpu.nvidia.com
                      pool: gpu-node-0
                      device: gpu-3
                      shareID: 0f3c1a52-5b0e-4c39-9d0c-7d4a2b0e7c11
                      consumedCapacity: {shares: "1"}
              reservedFor:
                - {resource: pods, name: s, uid: u1}
            """,
            ResourceClaim.class);
    assertThat(SoakChecker.claimedGpus(List.of(claim)))
        .containsExactly(new SoakChecker.ClaimedGpus("u1", "s-share", List.of(), Map.of(3, 1L)));
  }

  @Test
  void anAllocatedClaimGivesItsPodsTheIndicesOfItsDevices() {
    ResourceClaim claim =
        Serialization.unmarshal(
            """
            apiVersion: resource.k8s.io/v1
            kind: ResourceClaim
            metadata: {name: d-gpus, namespace: soak}
            spec:
              devices:
                requests:
                  - name: gpus
                    exactly: {deviceClassName: gpu.nvidia.com, count: 2}
            status:
              allocation:
                devices:
                  results:
                    - {request: gpus, driver: gpu.nvidia.com, pool: gpu-node-0, device: gpu-5}
                    - {request: gpus, driver: gpu.nvidia.com, pool: gpu-node-0, device: gpu-2}
              reservedFor:
                - {resource: pods, name: d, uid: u1}
            """,
            ResourceClaim.class);
    assertThat(SoakChecker.claimedGpus(List.of(claim)))
        .containsExactly(new SoakChecker.ClaimedGpus("u1", "d-gpus", List.of(2, 5)));
  }

  @Test
  void aPlaceholderWhosePrologRunsHoldsItsNode() {
    Pod p = pod("a", "u1", "gpu-node-0", Map.of(), Map.of());
    assertThat(invariants(List.of(p), List.of(job(1, "CONFIGURING", "gpu-node-0", tag("a", "u1")))))
        .isEmpty();
  }

  @Test
  void aFindingBecomesAViolationOnlyPastItsBoundCountedFromTheLastDisruption() {
    SoakChecker c = new SoakChecker(NS, List::of);
    Pod p = pod("a", "u1", "gpu-node-0", Map.of(), Map.of());
    Instant t = Instant.parse("2026-11-26T00:00:00Z");
    c.tick(t, List.of(p), List.of(), Optional.of(List.of()));
    c.disruptionBegins();
    c.tick(t.plusSeconds(40), List.of(p), List.of(), Optional.of(List.of()));
    c.disruptionEnds(t.plusSeconds(40));
    c.tick(t.plusSeconds(60), List.of(p), List.of(), Optional.of(List.of()));
    assertThat(c.violations()).as("20 s since the outage ended").isEmpty();
    c.tick(t.plusSeconds(71), List.of(p), List.of(), Optional.of(List.of()));
    assertThat(c.violations()).hasSize(1);
    c.tick(t.plusSeconds(72), List.of(), List.of(), Optional.of(List.of()));
    assertThat(c.convergedMs().get(Invariant.BOUND_POD_HAS_ITS_JOB))
        .containsExactly(Duration.ofSeconds(72).toMillis());
    assertThat(c.settled()).isTrue();
  }

  @Test
  void aWaitingPodWithoutAReasonIsReportedAtTheEnd() {
    Pod silent = pod("w", "u2", null, Map.of(), Map.of());
    assertThat(SoakChecker.silentWaitingPods(List.of(silent), NS)).hasSize(1);
    Pod told =
        new PodBuilder(silent)
            .withNewStatus()
            .addNewCondition()
            .withType(SoakChecker.CONDITION)
            .withStatus("False")
            .withReason("SlurmPending")
            .endCondition()
            .endStatus()
            .build();
    assertThat(SoakChecker.silentWaitingPods(List.of(told), NS)).isEmpty();
  }

  private static List<Invariant> invariants(List<Pod> pods, List<SlurmTruth.Job> jobs) {
    return invariants(pods, jobs, List.of());
  }

  private static List<Invariant> invariants(
      List<Pod> pods, List<SlurmTruth.Job> jobs, List<SoakChecker.ClaimedGpus> claims) {
    return SoakChecker.findings(pods, jobs, claims, NS).stream().map(Finding::invariant).toList();
  }

  @Test
  void slurmctldsPreemptionLinesAreReadWithTheirTimes() {
    String log =
        "[2026-11-26T10:00:01.250] sched: Allocate JobId=55 NodeList=gpu-node-3\n"
            + "[2026-11-26T10:00:01.100] preempted JobId=47 has been requeued to reclaim resources"
            + " for JobId=55\n"
            + "[2026-11-26T10:00:02.000] preempted JobId=9 has been killed to reclaim resources for"
            + " JobId=56\n"
            + "[2026-11-26T10:00:03.000] debug:  setting 30 sec preemption grace time for JobId=8"
            + " to reclaim resources for JobId=57\n";
    assertThat(SlurmPreemptions.parse(log, java.time.ZoneOffset.UTC))
        .containsExactly(
            new SlurmPreemptions.Preemption(47, 55, Instant.parse("2026-11-26T10:00:01.100Z")),
            new SlurmPreemptions.Preemption(9, 56, Instant.parse("2026-11-26T10:00:02Z")));
  }

  /**
   * Issue 29: the runbook charges a job whose run the schedule ended (its node set DOWN, a hand
   * requeue, a preemption for a critical job) as a placeholder took its node; the checker counts
   * such a charge apart and still judges every other one.
   */
  @Test
  void aChargeForARunTheScheduleEndedIsCountedApartAndAnyOtherIsJudged() {
    SoakChecker c = new SoakChecker(NS, List::of);
    Instant t0 = Instant.parse("2026-11-26T10:00:00Z");
    // 47 on node 3, whose node the schedule sets DOWN at t0+2.5 s; 48 on node 4 runs on
    var before =
        List.of(
            job(47, "RUNNING", "gpu-node-3", Optional.empty()),
            job(48, "RUNNING", "gpu-node-4", Optional.empty()));
    c.tick(t0, List.of(), List.of(), Optional.of(before));
    c.tick(t0.plusSeconds(2), List.of(), List.of(), Optional.of(before));
    c.nodeSetDown("gpu-node-3", t0.plusMillis(2_500));
    var after =
        List.of(
            job(55, "RUNNING", "gpu-node-3", tag("a", "u1")),
            job(48, "RUNNING", "gpu-node-4", Optional.empty()));
    c.tick(t0.plusSeconds(3), List.of(), List.of(), Optional.of(after));
    c.charged(Set.of(new SoakChecker.Charge(47, "ledger run 1")));

    c.ledgerCheck(t0.plusSeconds(60), List.of());

    assertThat(c.violations()).isEmpty();
    assertThat(c.preemptionsJudged()).contains("{its node set DOWN=1}");

    // the DOWN on node 3 explains nothing about 48, which ran on node 4
    c.charged(Set.of(new SoakChecker.Charge(48, "ledger run 1")));
    c.ledgerCheck(t0.plusSeconds(61), List.of());
    assertThat(c.violations())
        .singleElement()
        .satisfies(v -> assertThat(v.toString()).contains("job 48 charged"));
  }

  @Test
  void aVictimWhoseNodeOurPlaceholderTookMustBeChargedOnceAndNothingElse() {
    Instant t0 = Instant.parse("2026-11-26T10:00:00Z");
    JobRuns runs = new JobRuns();
    // training 47 runs on node 3, and 48 on node 4; 47 is preempted at t0+2.5 s for placeholder
    // 55, which runs on node 3 from t0+3 s; 48 loses its node otherwise (a higher partition's job,
    // a requeue), and placeholder 56 then starts on it
    runs.observe(t0, List.of(job(47, "RUNNING", "gpu-node-3", Optional.empty())));
    runs.observe(
        t0.plusSeconds(2),
        List.of(
            job(47, "RUNNING", "gpu-node-3", Optional.empty()),
            job(48, "RUNNING", "gpu-node-4", Optional.empty())));
    runs.observe(
        t0.plusSeconds(3),
        List.of(
            job(55, "RUNNING", "gpu-node-3", tag("a", "u1")),
            job(56, "RUNNING", "gpu-node-4", tag("b", "u2"))));
    var preempted = List.of(new SlurmPreemptions.Preemption(47, 55, t0.plusMillis(2_500)));
    Set<Long> ours = Set.of(55L, 56L);
    assertThat(SoakChecker.ledgerFindings(preempted, runs, ours, Set.of(), Set.of()))
        .extracting(Finding::evidence)
        .singleElement()
        .asString()
        .contains("job 47 for placeholder 55", "[gpu-node-3]", "never charged");
    // preempted again after its requeue, for placeholder 57 on node 3: two runs, one charged
    runs.observe(t0.plusSeconds(10), List.of(job(47, "RUNNING", "gpu-node-3", Optional.empty())));
    runs.observe(t0.plusSeconds(12), List.of(job(57, "RUNNING", "gpu-node-3", tag("c", "u3"))));
    var twice =
        List.of(preempted.get(0), new SlurmPreemptions.Preemption(47, 57, t0.plusMillis(11_500)));
    assertThat(
            SoakChecker.ledgerFindings(
                twice,
                runs,
                Set.of(55L, 56L, 57L),
                Set.of(new SoakChecker.Charge(47, "ledger run 1")),
                Set.of()))
        .extracting(Finding::evidence)
        .singleElement()
        .asString()
        .contains("2 times", "ledger run 1");
    assertThat(
            SoakChecker.ledgerFindings(
                twice,
                runs,
                Set.of(55L, 56L, 57L),
                Set.of(
                    new SoakChecker.Charge(47, "ledger run 1"),
                    new SoakChecker.Charge(47, "ledger run 2")),
                Set.of()))
        .isEmpty();
    assertThat(
            SoakChecker.ledgerFindings(
                preempted, runs, ours, Set.of(new SoakChecker.Charge(47, "event a")), Set.of()))
        .isEmpty();
    assertThat(
            SoakChecker.ledgerFindings(
                preempted,
                runs,
                ours,
                Set.of(
                    new SoakChecker.Charge(47, "event a"), new SoakChecker.Charge(47, "event b")),
                Set.of()))
        .extracting(Finding::evidence)
        .singleElement()
        .asString()
        .contains("charged to 2 pods");
    // the 60-minute soak's false alarm: a job preempted in two runs is told to two pods
    assertThat(
            SoakChecker.ledgerFindings(
                preempted,
                runs,
                ours,
                Set.of(
                    new SoakChecker.Charge(47, "event a"),
                    new SoakChecker.Charge(47, "event b"),
                    new SoakChecker.Charge(47, "ledger run 1"),
                    new SoakChecker.Charge(47, "ledger run 2")),
                Set.of()))
        .isEmpty();
    // 48 lost its node some other way: charging it is charging training the budget never took
    assertThat(
            SoakChecker.ledgerFindings(
                preempted,
                runs,
                ours,
                Set.of(new SoakChecker.Charge(47, "ledger"), new SoakChecker.Charge(48, "ledger")),
                Set.of()))
        .extracting(Finding::evidence)
        .singleElement()
        .asString()
        .contains("job 48 charged", "never preempted it");
    assertThat(
            SoakChecker.ledgerFindings(
                preempted,
                runs,
                ours,
                Set.of(new SoakChecker.Charge(47, "ledger"), new SoakChecker.Charge(48, "ledger")),
                Set.of(48L)))
        .as("the schedule requeued 48 by hand: the extender cannot tell, it is not judged")
        .isEmpty();
    // issue 60: a victim whose placeholder ran elsewhere is charged all the same (inferred)
    var elsewhere = List.of(new SlurmPreemptions.Preemption(48, 55, t0.plusMillis(2_500)));
    assertThat(SoakChecker.ledgerFindings(elsewhere, runs, ours, Set.of(), Set.of()))
        .extracting(Finding::evidence)
        .singleElement()
        .asString()
        .contains("job 48 for placeholder 55", "ran elsewhere", "never charged");
    assertThat(
            SoakChecker.ledgerFindings(
                elsewhere, runs, ours, Set.of(new SoakChecker.Charge(48, "event b")), Set.of()))
        .isEmpty();
  }

  private static Optional<PlaceholderTag> tag(String pod, String uid) {
    return Optional.of(new PlaceholderTag("soak", pod, uid));
  }

  private static SlurmTruth.Job job(
      long id, String state, String nodes, Optional<PlaceholderTag> tag) {
    return new SlurmTruth.Job(
        id,
        state,
        nodes.isEmpty() ? List.of() : io.kse.slurm.HostList.expand(nodes),
        "kse",
        8,
        tag,
        Map.of(),
        Map.of());
  }

  /** {@code p} with a claim from the two-GPU template, as the soak's DRA pods have. */
  private static Pod claimingTwo(Pod p) {
    return new PodBuilder(p)
        .editSpec()
        .addNewResourceClaim()
        .withName("gpus")
        .withResourceClaimTemplateName("two")
        .endResourceClaim()
        .endSpec()
        .build();
  }

  private static Pod pod(
      String name, String uid, String node, Map<String, String> labels, Map<String, String> ann) {
    return new PodBuilder()
        .withNewMetadata()
        .withName(name)
        .withNamespace("soak")
        .withUid(uid)
        .withLabels(labels)
        .withAnnotations(ann)
        .endMetadata()
        .withNewSpec()
        .withSchedulerName(SoakChecker.SCHEDULER)
        .withNodeName(node)
        .endSpec()
        .build();
  }
}
