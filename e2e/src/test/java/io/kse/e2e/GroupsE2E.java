package io.kse.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
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
import org.junit.jupiter.api.Test;

/**
 * Multi-node groups on the real control plane, the real LeaderWorkerSet controller and real Slurm:
 * one placeholder job per group, member i on the job's i-th node, topology inside one NVLink domain
 * (issue 13's scenarios 1-7).
 */
class GroupsE2E extends Scenario {
  static final String DOMAIN_LABEL = "nvidia.com/gpu.clique";

  String domainOf(String node) {
    Node n = kube.nodes().withName(node).get();
    return n.getMetadata().getLabels().get(DOMAIN_LABEL);
  }

  /** How a LeaderWorkerSet asks for one NVLink domain per group. */
  enum Topology {
    /** Not at all. */
    NONE,
    /** LWS's exclusive-topology on the clique label: one group per domain. */
    EXCLUSIVE,
    /** Our annotation on the pod template: each group inside one domain. */
    ANNOTATION
  }

  /** A LeaderWorkerSet of our scheduler: {@code replicas} groups of {@code size} 8-GPU pods. */
  GenericKubernetesResource leaderWorkerSet(
      String name, int replicas, int size, Topology topology) {
    String yaml =
        """
        apiVersion: leaderworkerset.x-k8s.io/v1
        kind: LeaderWorkerSet
        metadata:
          name: %s
          namespace: %s
          annotations: %s
        spec:
          replicas: %d
          leaderWorkerTemplate:
            size: %d
            restartPolicy: None
            workerTemplate:
              metadata:
                annotations: %s
              spec:
                schedulerName: slurm-inference
                terminationGracePeriodSeconds: 0
                containers:
                  - name: server
                    image: registry.example/model-server:1
                    resources: {limits: {nvidia.com/gpu: "8"}}
        """
            .formatted(
                name,
                ns,
                topology == Topology.EXCLUSIVE
                    ? "{leaderworkerset.sigs.k8s.io/exclusive-topology: " + DOMAIN_LABEL + "}"
                    : "{}",
                replicas,
                size,
                topology == Topology.ANNOTATION ? "{kse.io/topology: nvlink-domain}" : "{}");
    GenericKubernetesResource lws = Serialization.unmarshal(yaml, GenericKubernetesResource.class);
    return kube.genericKubernetesResources("leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet")
        .inNamespace(ns)
        .resource(lws)
        .create();
  }

  /** Every group: one job of its size, member i on the job's i-th node, all in one domain. */
  void assertGroupsPlacedAsTheirJobsSay(List<Pod> pods, int groups, int size) {
    Map<String, SlurmJob> jobs = groupJobs();
    assertThat(jobs).hasSize(groups);
    Set<String> nodesUsed = new HashSet<>();
    for (Pod p : pods) {
      assertThat(nodesUsed.add(p.getSpec().getNodeName()))
          .as("no node holds two members: %s", p.getSpec().getNodeName())
          .isTrue();
    }
    for (SlurmJob j : jobs.values()) {
      assertThat(j.state()).isEqualTo(JobState.RUNNING);
      assertThat(j.nodes()).hasSize(size);
      assertThat(j.nodes().stream().map(this::domainOf).distinct())
          .as("job %d inside one NVLink domain", j.id())
          .hasSize(1);
      String id = j.placeholder().orElseThrow().group().orElseThrow();
      String[] parts = id.split("/"); // lws/<name>/<group index>
      for (Pod p : pods) {
        Map<String, String> l = p.getMetadata().getLabels();
        if (parts[2].equals(l.get("leaderworkerset.sigs.k8s.io/group-index"))) {
          int worker =
              Integer.parseInt(l.getOrDefault("leaderworkerset.sigs.k8s.io/worker-index", "0"));
          assertThat(p.getSpec().getNodeName())
              .as("member %d of %s on the job's node %d", worker, id, worker)
              .isEqualTo(j.nodes().get(worker));
          assertThat(p.getMetadata().getAnnotations())
              .containsEntry("kse.io/slurm-job", Long.toString(j.id()))
              .containsEntry("kse.io/slurm-node", j.nodes().get(worker));
        }
      }
    }
  }

  /** Scenario 1: LWS, 2 replicas × size 2, 8 GPUs per pod, exclusive NVLink-domain topology. */
  @Test
  void aLeaderWorkerSetGetsOneJobPerGroupEachInsideItsOwnNvlinkDomain() {
    leaderWorkerSet("llm", 2, 2, Topology.EXCLUSIVE);
    List<Pod> pods = awaitAllBound(4);
    assertGroupsPlacedAsTheirJobsSay(pods, 2, 2);
    assertThat(groupJobs().values().stream().map(j -> domainOf(j.nodes().get(0))).distinct())
        .as("exclusive-topology: the two groups in different domains")
        .hasSize(2);
  }

  /**
   * Scenario 2: domain 0 mostly busy with work nobody may preempt → the group lands in domain 1;
   * every node busy with preemptible training → exactly as many training jobs as the group needs
   * nodes are preempted, inside one domain.
   */
  @Test
  void aGroupGoesWhereItsDomainIsFreeAndPreemptsOnlyWhatItNeeds() {
    assumeTrue(stack.managed(), "fills nodes with sbatch jobs: needs the local Slurm CLI");
    List<String> gpu = stack.gpuNodes();
    for (String node : gpu.subList(0, 3)) { // same partition as inference: never preempted by it
      sbatch("inference", node);
    }
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () ->
                sbatchJobs.stream()
                    .allMatch(id -> slurm.job(id).map(Scenario::running).orElse(false)));
    leaderWorkerSet("first", 1, 2, Topology.ANNOTATION);
    List<Pod> first = awaitAllBound(2);
    for (Pod p : first) {
      assertThat(domainOf(p.getSpec().getNodeName())).isEqualTo("nvl-1");
    }
    kube.genericKubernetesResources("leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet")
        .inNamespace(ns)
        .withName("first")
        .delete();
    await().atMost(Duration.ofSeconds(30)).until(() -> pods().isEmpty() && groupJobs().isEmpty());

    // now every free node runs preemptible training
    Map<Long, String> training = new java.util.LinkedHashMap<>();
    for (String node : gpu.subList(3, gpu.size())) {
      training.put(sbatch("training", node), node);
    }
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () ->
                training.keySet().stream()
                    .allMatch(id -> slurm.job(id).map(Scenario::running).orElse(false)));
    leaderWorkerSet("second", 1, 2, Topology.ANNOTATION);
    List<Pod> second = awaitAllBound(2);
    Set<String> groupNodes =
        second.stream().map(p -> p.getSpec().getNodeName()).collect(Collectors.toSet());
    List<Long> preempted =
        training.keySet().stream()
            .filter(id -> !slurm.job(id).map(Scenario::running).orElse(false))
            .toList();
    assertThat(preempted).as("exactly the training jobs on the group's 2 nodes").hasSize(2);
    assertThat(preempted.stream().map(training::get).collect(Collectors.toSet()))
        .isEqualTo(groupNodes);
    assertThat(groupNodes.stream().map(this::domainOf).distinct()).hasSize(1);
  }

  /** A plain pod of group {@code group} (size {@code size}, index {@code index}). */
  PodBuilder member(String group, int size, int index) {
    return inferencePod(group + "-" + index, 8)
        .editMetadata()
        .addToAnnotations("kse.io/group", group)
        .addToAnnotations("kse.io/group-size", Integer.toString(size))
        .addToAnnotations("kse.io/group-index", Integer.toString(index))
        .endMetadata();
  }

  /**
   * Scenario 3: 2 nodes free for a 3-node group and nothing may be preempted → nothing bound, every
   * member told why; a node freed → all 3 bound.
   */
  @Test
  void aGroupWaitsWholeUntilSlurmHasRoomForAllOfIt() {
    assumeTrue(stack.managed(), "fills nodes with sbatch jobs: needs the local Slurm CLI");
    List<Long> fillers = fillAllButTwoGpuNodes();
    for (int i = 0; i < 3; i++) {
      create(member("trio", 3, i));
    }
    await("every member told why it waits")
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () -> {
              for (int i = 0; i < 3; i++) {
                assertThat(events("trio-" + i))
                    .anySatisfy(e -> assertThat(e.getMessage()).contains("waiting for Slurm job"));
              }
            });
    assertThat(pods()).allMatch(p -> p.getSpec().getNodeName() == null);
    SlurmJob job = groupJobs().get("kse/trio");
    assertThat(job.state()).isEqualTo(JobState.PENDING);
    assertThat(job.nodes()).isEmpty();

    stack.slurmCluster().cli("scancel", Long.toString(fillers.get(0)));
    List<Pod> bound = awaitAllBound(3);
    SlurmJob running = groupJobs().get("kse/trio");
    assertThat(running.id()).isEqualTo(job.id());
    for (Pod p : bound) {
      int index = Integer.parseInt(p.getMetadata().getAnnotations().get("kse.io/group-index"));
      assertThat(p.getSpec().getNodeName()).isEqualTo(running.nodes().get(index));
    }
  }

  /**
   * Scenario 4: a worker deleted, LWS recreates it → back on its node, no orphan or doubled job.
   */
  @Test
  void aRecreatedWorkerGoesBackToItsNodeWithoutANewJob() {
    leaderWorkerSet("llm", 1, 3, Topology.NONE);
    awaitAllBound(3);
    SlurmJob job = groupJobs().values().iterator().next();
    Pod worker = pod("llm-0-2");
    String node = worker.getSpec().getNodeName();
    kube.pods().inNamespace(ns).withName("llm-0-2").withGracePeriod(0).delete();
    await("worker recreated and bound")
        .atMost(BIND_TIMEOUT)
        .until(
            () -> {
              Pod p = pod("llm-0-2");
              return p != null
                  && !p.getMetadata().getUid().equals(worker.getMetadata().getUid())
                  && p.getSpec().getNodeName() != null;
            });
    assertThat(pod("llm-0-2").getSpec().getNodeName()).isEqualTo(node);
    assertThat(groupJobs()).hasSize(1);
    assertThat(groupJobs().values().iterator().next().id()).isEqualTo(job.id());
    assertThat(activePlaceholders(ns)).hasSize(1);
  }

  /** Scenario 5: a Workload API gang of 4 → one job of 4 nodes, all bound, the PodGroup told. */
  @Test
  void aWorkloadApiGangOfFourIsOneJob() {
    GenericKubernetesResource group =
        Serialization.unmarshal(
            """
            apiVersion: scheduling.k8s.io/v1beta1
            kind: PodGroup
            metadata: {name: gang, namespace: %s}
            spec:
              schedulingPolicy: {gang: {minCount: 4}}
            """
                .formatted(ns),
            GenericKubernetesResource.class);
    kube.genericKubernetesResources("scheduling.k8s.io/v1beta1", "PodGroup")
        .inNamespace(ns)
        .resource(group)
        .create();
    for (int i = 0; i < 4; i++) {
      create(inferencePod("gang-" + i, 8).editSpec().withNewSchedulingGroup("gang").endSpec());
    }
    List<Pod> pods = awaitAllBound(4);
    SlurmJob job = groupJobs().get("podgroup/gang");
    assertThat(job.nodes()).hasSize(4);
    for (Pod p : pods) { // indexed by name
      int index = Integer.parseInt(p.getMetadata().getName().substring("gang-".length()));
      assertThat(p.getSpec().getNodeName()).isEqualTo(job.nodes().get(index));
    }
    await("PodGroupInitiallyScheduled")
        .atMost(Duration.ofSeconds(20))
        .untilAsserted(
            () ->
                assertThat(
                        Serialization.asJson(
                            kube.genericKubernetesResources("scheduling.k8s.io/v1beta1", "PodGroup")
                                .inNamespace(ns)
                                .withName("gang")
                                .get()))
                    .contains("PodGroupInitiallyScheduled"));
  }

  /** Scenario 6: three plain pods naming one kse.io/group → one 3-node job, member i on node i. */
  @Test
  void threePlainPodsOfOneKseGroupShareOneJob() {
    for (int i = 2; i >= 0; i--) { // any order
      create(member("plain", 3, i));
    }
    List<Pod> pods = awaitAllBound(3);
    SlurmJob job = groupJobs().get("kse/plain");
    assertThat(job.nodes()).hasSize(3);
    for (Pod p : pods) {
      int index = Integer.parseInt(p.getMetadata().getAnnotations().get("kse.io/group-index"));
      assertThat(p.getSpec().getNodeName()).isEqualTo(job.nodes().get(index));
    }
    assertThat(activePlaceholders(ns)).hasSize(1);
  }

  /** Scenario 7: the extender SIGKILLed while a group is half bound → all bound, one job. */
  @Test
  void anExtenderKilledWhileAGroupIsHalfBoundFinishesItAfterRestart() {
    for (int i = 0; i < 4; i++) {
      create(member("half", 4, i));
    }
    await("a first member bound")
        .atMost(BIND_TIMEOUT)
        .pollInterval(Duration.ofMillis(20))
        .until(() -> pods().stream().anyMatch(p -> p.getSpec().getNodeName() != null));
    stack.killExtender();
    long boundAtKill = pods().stream().filter(p -> p.getSpec().getNodeName() != null).count();
    stack.startExtender();
    List<Pod> pods = awaitAllBound(4);
    assertThat(activePlaceholders(ns)).as("one job, no double").hasSize(1);
    SlurmJob job = groupJobs().get("kse/half");
    for (Pod p : pods) {
      int index = Integer.parseInt(p.getMetadata().getAnnotations().get("kse.io/group-index"));
      assertThat(p.getSpec().getNodeName()).isEqualTo(job.nodes().get(index));
    }
    System.out.println("members bound when the extender was killed: " + boundAtKill + " of 4");
  }

  /** Work nobody may preempt on every GPU node but two, running; returns the job ids. */
  List<Long> fillAllButTwoGpuNodes() {
    List<String> gpu = stack.gpuNodes();
    List<Long> fillers = new ArrayList<>();
    for (String node : gpu.subList(0, gpu.size() - 2)) {
      fillers.add(sbatch("inference", node));
    }
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () ->
                fillers.stream()
                    .allMatch(id -> slurm.job(id).map(Scenario::running).orElse(false)));
    return fillers;
  }

  /** A plain pod of group {@code group} (size {@code size}) indexed by its name, asking GPUs. */
  PodBuilder byName(String name, String group, int size, int gpus) {
    return inferencePod(name, gpus)
        .editMetadata()
        .addToAnnotations("kse.io/group", group)
        .addToAnnotations("kse.io/group-size", Integer.toString(size))
        .endMetadata();
  }

  /** The pod's kse.io/SlurmAllocated condition reason, or "". */
  String allocatedReason(String pod) {
    Pod p = pod(pod);
    return p == null || p.getStatus().getConditions() == null
        ? ""
        : p.getStatus().getConditions().stream()
            .filter(c -> c.getType().equals("kse.io/SlurmAllocated"))
            .map(io.fabric8.kubernetes.api.model.PodCondition::getReason)
            .findFirst()
            .orElse("");
  }

  /**
   * Issue 26 #1: a member recreated asking more GPUs than its group's job holds per node is never
   * bound short: it waits, told why, while the other member runs; once none runs the job is
   * replaced by one of the new shape.
   */
  @Test
  void aMemberRecreatedAskingMoreGpusIsNeverBoundOnFewer() {
    create(byName("grow-a", "grow", 2, 4));
    create(byName("grow-b", "grow", 2, 4));
    awaitAllBound(2);
    SlurmJob old = groupJobs().get("kse/grow");
    assertThat(old.gpusPerNode()).isEqualTo(4);
    kube.pods().inNamespace(ns).withName("grow-b").withGracePeriod(0).delete();
    await("grow-b gone").atMost(Duration.ofSeconds(20)).until(() -> pod("grow-b") == null);
    create(byName("grow-b", "grow", 2, 8));
    await("grow-b told why it waits")
        .atMost(Duration.ofSeconds(30))
        .until(() -> allocatedReason("grow-b").equals("ShapeChanged"));
    sleep(Duration.ofSeconds(3));
    assertThat(pod("grow-b").getSpec().getNodeName()).as("never bound on 4 GPUs").isNull();
    assertThat(slurm.job(old.id()).map(SlurmJob::state)).contains(JobState.RUNNING);
    // the other member goes too, as a controller recreating its group would: a job of the new shape
    kube.pods().inNamespace(ns).withName("grow-a").withGracePeriod(0).delete();
    await("grow-a gone").atMost(Duration.ofSeconds(20)).until(() -> pod("grow-a") == null);
    create(byName("grow-a", "grow", 2, 8));
    List<Pod> pods = awaitAllBound(2);
    SlurmJob now = groupJobs().get("kse/grow");
    assertThat(now.id()).isNotEqualTo(old.id());
    assertThat(now.gpusPerNode()).isEqualTo(8);
    assertThat(slurm.job(old.id()).map(j -> j.state().isFinal())).contains(true);
    for (Pod p : pods) {
      assertThat(now.nodes()).contains(p.getSpec().getNodeName());
      assertThat(p.getMetadata().getAnnotations())
          .containsEntry("kse.io/slurm-job", Long.toString(now.id()));
    }
    assertThat(eventReasons("grow-b"))
        .as("the waiting member is told its group's job was replaced")
        .contains("PlacementShapeChanged");
  }

  /**
   * Issue 26 #2: members indexed by name keep the node they were sent to when one of them is
   * deleted before any is bound, and the recreated member gets the free node: each bound where its
   * annotation says.
   */
  @Test
  void membersIndexedByNameKeepTheirNodesWhenOneIsDeletedBeforeAnyBind() {
    for (String n : List.of("quad-a", "quad-b", "quad-c", "quad-d")) {
      // a second gate of the test's own keeps them from binding once the extender has woken them
      create(byName(n, "quad", 4, 8).editSpec().addNewSchedulingGate("e2e.kse.io/hold").endSpec());
    }
    await("every member woken: sent to its node")
        .atMost(BIND_TIMEOUT)
        .until(
            () ->
                pods().stream()
                    .allMatch(
                        p ->
                            p.getMetadata().getAnnotations() != null
                                && p.getMetadata()
                                    .getAnnotations()
                                    .containsKey("kse.io/slurm-node")));
    Map<String, String> sentTo =
        pods().stream()
            .collect(
                Collectors.toMap(
                    p -> p.getMetadata().getName(),
                    p -> p.getMetadata().getAnnotations().get("kse.io/slurm-node")));
    SlurmJob job = groupJobs().get("kse/quad");
    kube.pods().inNamespace(ns).withName("quad-b").withGracePeriod(0).delete();
    await("quad-b gone").atMost(Duration.ofSeconds(20)).until(() -> pod("quad-b") == null);
    for (String n : List.of("quad-a", "quad-c", "quad-d")) {
      release(n);
    }
    create(byName("quad-b", "quad", 4, 8));
    List<Pod> pods = awaitAllBound(4);
    for (Pod p : pods) {
      String name = p.getMetadata().getName();
      assertThat(p.getSpec().getNodeName())
          .as(name + " bound where its annotation says")
          .isEqualTo(p.getMetadata().getAnnotations().get("kse.io/slurm-node"));
      if (!name.equals("quad-b")) {
        assertThat(p.getSpec().getNodeName())
            .as(name + " kept its node")
            .isEqualTo(sentTo.get(name));
      }
    }
    assertThat(pod("quad-b").getSpec().getNodeName()).isEqualTo(sentTo.get("quad-b"));
    assertThat(groupJobs().get("kse/quad").id()).as("no new job").isEqualTo(job.id());
  }

  /** Lifts the test's own scheduling gate. */
  void release(String pod) {
    kube.pods()
        .inNamespace(ns)
        .withName(pod)
        .edit(
            p -> {
              p.getSpec().getSchedulingGates().removeIf(g -> g.getName().equals("e2e.kse.io/hold"));
              return p;
            });
  }

  /**
   * Issue 26 #3: a group made invalid while its job pends has the job cancelled (it would run for
   * nobody); made consistent again at a new size, it gets a job of that size.
   */
  @Test
  void aGroupMadeInvalidWhileItsJobPendsNeverHoldsNodesForNobody() {
    assumeTrue(stack.managed(), "fills nodes with sbatch jobs: needs the local Slurm CLI");
    fillAllButTwoGpuNodes();
    for (String n : List.of("shape-a", "shape-b", "shape-c")) {
      create(byName(n, "shape", 3, 8));
    }
    await("the group's job pends (2 nodes free for 3)")
        .atMost(Duration.ofSeconds(30))
        .until(() -> groupJobs().containsKey("kse/shape"));
    SlurmJob pending = groupJobs().get("kse/shape");
    assertThat(pending.state()).isEqualTo(JobState.PENDING);
    kube.pods()
        .inNamespace(ns)
        .withName("shape-b")
        .edit(
            p -> {
              p.getMetadata().getAnnotations().put("kse.io/group-size", "2");
              return p;
            });
    await("the job of the old shape cancelled")
        .atMost(Duration.ofSeconds(20))
        .until(() -> slurm.job(pending.id()).map(j -> j.state().isFinal()).orElse(true));
    await("members told the group is invalid")
        .atMost(Duration.ofSeconds(20))
        .until(() -> allocatedReason("shape-a").equals("GroupInvalid"));
    // made consistent again at size 2: the third member goes
    kube.pods().inNamespace(ns).withName("shape-c").withGracePeriod(0).delete();
    kube.pods()
        .inNamespace(ns)
        .withName("shape-a")
        .edit(
            p -> {
              p.getMetadata().getAnnotations().put("kse.io/group-size", "2");
              return p;
            });
    List<Pod> pods = awaitAllBound(2);
    SlurmJob now = groupJobs().get("kse/shape");
    assertThat(now.nodes()).hasSize(2);
    SlurmJob old = slurm.job(pending.id()).orElseThrow();
    assertThat(old.state()).isEqualTo(JobState.CANCELLED);
    assertThat(old.nodes()).as("the old job never held a node").isEmpty();
    for (Pod p : pods) {
      assertThat(now.nodes()).contains(p.getSpec().getNodeName());
    }
  }

  static void sleep(Duration d) {
    try {
      Thread.sleep(d.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }
}
