package io.kse.extender.tools;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.kse.extender.k8s.NodeSync;
import io.kse.extender.k8s.WellKnown;
import io.kse.slurm.JobState;
import io.kse.slurm.JobSubmission;
import io.kse.slurm.NodeAdmin;
import io.kse.slurm.PlaceholderOwner;
import io.kse.slurm.PlaceholderTag;
import io.kse.slurm.testing.FakeSlurmClient;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The cleanup finds only what this extender left, and removing it leaves nothing. */
@EnableKubernetesMockClient(crud = true)
class LeftoversTest {
  static final String CLUSTER = "k8s-ours";
  KubernetesClient client;

  final FakeSlurmClient slurm = new FakeSlurmClient(Clock.systemUTC(), "gpu-0", "gpu-1", "gpu-2");

  Leftovers.Where where() {
    return new Leftovers.Where(
        slurm,
        NodeAdmin.rest(slurm),
        true,
        new PlaceholderOwner(Optional.of(CLUSTER), Optional.of(FakeSlurmClient.USER)),
        client,
        "kse",
        "kube-slurm-extender");
  }

  long placeholder(String pod, String cluster) {
    return slurm.submit(
        JobSubmission.builder(new PlaceholderTag("serving", pod, pod + "-uid").inCluster(cluster))
            .build());
  }

  @Test
  void findsOnlyWhatThisExtenderLeftAndRemovingItLeavesNothing() {
    long running = placeholder("llm-0", CLUSTER);
    slurm.allocate(running, List.of("gpu-0"));
    long pending = placeholder("llm-1", CLUSTER);
    long ended = placeholder("llm-2", CLUSTER);
    slurm.end(ended, JobState.CANCELLED);
    placeholder("other-cluster", "k8s-theirs");
    slurm.addJobAs(
        "mallory", new PlaceholderTag("serving", "copy", "u").inCluster(CLUSTER).toComment());
    slurm.addForeignJob("train", JobState.RUNNING, List.of("gpu-2"));
    slurm.drain("gpu-1", NodeSync.DRAIN_REASON);
    slurm.drain("gpu-2", "admin: bad fan");
    client
        .nodes()
        .resource(
            new NodeBuilder()
                .withNewMetadata()
                .withName("gpu-2")
                .endMetadata()
                .withNewSpec()
                .addNewTaint()
                .withKey(WellKnown.TAINT_KEY)
                .withValue("idle-drain")
                .withEffect("NoSchedule")
                .endTaint()
                .addNewTaint()
                .withKey("theirs")
                .withEffect("NoSchedule")
                .endTaint()
                .endSpec()
                .build())
        .create();
    client
        .nodes()
        .resource(new NodeBuilder().withNewMetadata().withName("gpu-0").endMetadata().build())
        .create();
    client
        .pods()
        .inNamespace("serving")
        .resource(
            new PodBuilder()
                .withNewMetadata()
                .withName("llm-1")
                .withUid("llm-1-uid")
                .endMetadata()
                .withNewSpec()
                .withSchedulerName("slurm-inference")
                .addNewSchedulingGate(WellKnown.SCHEDULING_GATE)
                .addNewSchedulingGate("theirs")
                .endSpec()
                .build())
        .create();
    lease(Instant.now().minusSeconds(600));
    ledger();

    List<Leftovers.Item> found = Leftovers.find(where(), Instant.now());
    assertThat(found)
        .extracting(i -> i.kind() + " " + i.what())
        .containsExactlyInAnyOrder(
            "placeholder Slurm job " + running + " (RUNNING) for pod serving/llm-0",
            "placeholder Slurm job " + pending + " (PENDING) for pod serving/llm-1",
            "drain Slurm node gpu-1 (idle, reason \"" + NodeSync.DRAIN_REASON + "\")",
            "taint node gpu-2 (" + WellKnown.TAINT_KEY + ")",
            "gate pod serving/llm-1",
            "lease kse/kube-slurm-extender");
    assertThat(Leftovers.ledger(where())).isPresent();
    assertThat(Leftovers.held(where(), Instant.now())).as("renewed 10 min ago").isEmpty();

    found.forEach(i -> i.remove().run());

    assertThat(slurm.job(running).orElseThrow().state()).isEqualTo(JobState.CANCELLED);
    assertThat(slurm.job(pending).orElseThrow().state()).isEqualTo(JobState.CANCELLED);
    assertThat(slurm.node("gpu-1").orElseThrow().reason()).isEmpty();
    assertThat(slurm.node("gpu-2").orElseThrow().reason())
        .as("an admin's drain")
        .isEqualTo("admin: bad fan");
    assertThat(client.nodes().withName("gpu-2").get().getSpec().getTaints())
        .extracting(t -> t.getKey())
        .containsExactly("theirs");
    assertThat(Leftovers.find(where(), Instant.now()))
        .as("once removed, nothing is found but what the mock server cannot patch: gates")
        .extracting(Leftovers.Item::kind)
        .doesNotContain("placeholder", "drain", "taint", "lease");
    assertThat(Leftovers.ledger(where())).as("the ledger is removed only when asked").isPresent();
  }

  @Test
  void aFreshLeaseIsHeldAndLeftAlone() {
    lease(Instant.now().minusSeconds(5));
    assertThat(Leftovers.held(where(), Instant.now()))
        .singleElement()
        .asString()
        .startsWith("kse/kube-slurm-extender held by kse-0");
    assertThat(Leftovers.find(where(), Instant.now()))
        .extracting(Leftovers.Item::kind)
        .doesNotContain("lease");
    assertThat(Leftovers.held(where(), Instant.now().plusSeconds(60))).isEmpty();
  }

  void lease(Instant renewed) {
    client
        .leases()
        .inNamespace("kse")
        .resource(
            new LeaseBuilder()
                .withNewMetadata()
                .withName("kube-slurm-extender")
                .endMetadata()
                .withNewSpec()
                .withHolderIdentity("kse-0")
                .withLeaseDurationSeconds(15)
                .withRenewTime(ZonedDateTime.ofInstant(renewed, ZoneOffset.UTC))
                .endSpec()
                .build())
        .createOr(r -> r.update());
  }

  void ledger() {
    client
        .configMaps()
        .inNamespace("kse")
        .resource(
            new io.fabric8.kubernetes.api.model.ConfigMapBuilder()
                .withNewMetadata()
                .withName("kube-slurm-extender-preemptions")
                .endMetadata()
                .addToData("ledger", "[]")
                .build())
        .create();
  }
}
