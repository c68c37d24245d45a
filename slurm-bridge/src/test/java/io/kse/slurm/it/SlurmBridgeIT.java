package io.kse.slurm.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.kse.slurm.JobState;
import io.kse.slurm.JobSubmission;
import io.kse.slurm.JobUpdate;
import io.kse.slurm.SlurmClient;
import io.kse.slurm.SlurmClients;
import io.kse.slurm.SlurmConfig;
import io.kse.slurm.SlurmJob;
import io.kse.slurm.SlurmNode;
import io.kse.slurm.SlurmRejectedException;
import io.kse.slurm.SlurmUnauthorizedException;
import io.kse.slurm.SlurmUnavailableException;
import io.kse.slurm.testing.LocalSlurmCluster;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The bridge against the real local Slurm 22.05 (partition-priority preemption mode). */
class SlurmBridgeIT {
  static LocalSlurmCluster cluster;
  static SlurmClient slurm;

  @BeforeAll
  static void startCluster() {
    cluster = LocalSlurmCluster.shared(LocalSlurmCluster.Mode.PARTITION);
    slurm = SlurmClients.connect(cluster.config(), new SimpleMeterRegistry());
  }

  @BeforeEach
  void idle() {
    cluster.cancelAll();
  }

  static JobSubmission.Builder placeholder(String name) {
    return cluster.placeholder(name);
  }

  static SlurmJob awaitState(long id, JobState state) {
    await()
        .atMost(Duration.ofSeconds(15))
        .pollInterval(Duration.ofMillis(50))
        .until(() -> slurm.job(id).map(SlurmJob::state).orElse(null) == state);
    return slurm.job(id).orElseThrow();
  }

  @Test
  void discoversTheServedVersion() {
    assertThat(slurm.apiVersion()).isEqualTo(LocalSlurmCluster.expectedApiVersion());
  }

  /** Issue 46's fence reads the release from slurmrestd's own answers, on every version. */
  @Test
  void slurmrestdSaysWhichSlurmReleaseItSpeaksFor() {
    io.kse.slurm.SlurmRelease r = slurm.release().orElseThrow();
    assertThat(String.format("%d.%02d", r.major(), r.minor()))
        .isEqualTo(LocalSlurmCluster.version());
    assertThat(r.keepsShardsApart()).isEqualTo(!LocalSlurmCluster.version().equals("22.05"));
  }

  @Test
  void aPlaceholderRunsOnOneNodeWithTheRequestedGpus() {
    long t0 = System.nanoTime();
    long id =
        slurm.submit(
            placeholder("gpu4")
                .partition("inference")
                .cpusPerNode(4)
                .memoryPerNodeMb(4096)
                .gresPerNode("gpu:h100:4")
                .build());
    SlurmJob j = awaitState(id, JobState.RUNNING);
    long ms = (System.nanoTime() - t0) / 1_000_000;
    System.out.println(
        "[measure] REST submit -> RUNNING (seen by GET job, 50 ms polling): " + ms + " ms");
    assertThat(j.nodes()).hasSize(1);
    assertThat(j.partition()).isEqualTo("inference");
    // 22.05 says gres:gpu:h100:4, 24.11+ gres/gpu:h100:4: the bridge reads both
    assertThat(j.tresPerNode()).isIn("gres:gpu:h100:4", "gres/gpu:h100:4");
    assertThat(j.gpusPerNode()).isEqualTo(4);
    assertThat(j.placeholder()).isPresent();
    // which 4: gres_detail, read the same way from every REST version (22.05 to 26.05)
    assertThat(j.gpuIndicesOn(j.nodes().get(0))).contains(List.of(0, 1, 2, 3));
    // Slurm really bound 4 of the node's 8 (fake) GPUs to the job
    assertThat(cluster.cli("scontrol", "show", "job", "-d", Long.toString(id)))
        .contains("GRES=gpu:h100:4(IDX:0-3)")
        .contains("NumCPUs=4");
  }

  /**
   * Slurm 26.05: nodes made with {@code scontrol create state=external} (no slurmd; the cluster
   * script's --external-nodes, in their own partition) take an external placeholder, GPUs and all.
   */
  @Test
  void anExternalPlaceholderRunsOnANodeWithoutSlurmd() {
    org.junit.jupiter.api.Assumptions.assumeTrue(
        "26.05".equals(LocalSlurmCluster.version()),
        "external nodes need Slurm 25.11+; the local cluster makes them on 26.05");
    SlurmNode ext = node("ext-gpu-0");
    assertThat(ext.flags()).contains("EXTERNAL");
    assertThat(ext.gres()).isEqualTo("gpu:h100:8");
    long id =
        slurm.submit(
            placeholder("on-external")
                .partition("external")
                .gresPerNode("gpu:h100:4")
                .shape(JobSubmission.Shape.EXTERNAL)
                .build());
    SlurmJob j = awaitState(id, JobState.RUNNING);
    assertThat(j.nodes()).hasSize(1).allMatch(n -> n.startsWith("ext-gpu-"));
    assertThat(j.gpuIndicesOn(j.nodes().get(0))).contains(List.of(0, 1, 2, 3));
    slurm.cancel(id);
    assertThat(awaitState(id, JobState.CANCELLED).state().isFinal()).isTrue();
  }

  @Test
  void cancellingAPlaceholderFreesItsNode() {
    long id = slurm.submit(placeholder("whole").exclusive(true).gresPerNode("gpu:h100:8").build());
    String node = awaitState(id, JobState.RUNNING).nodes().get(0);
    assertThat(node(node).state()).isEqualTo("allocated");
    slurm.cancel(id);
    assertThat(awaitState(id, JobState.CANCELLED).state().isFinal()).isTrue();
    await().atMost(Duration.ofSeconds(15)).until(() -> node(node).state().equals("idle"));
    slurm.cancel(id); // cancelling again is fine
  }

  @Test
  void aPendingJobCanBeUpdatedAndReleased() {
    long id = slurm.submit(placeholder("held").hold(true).build());
    SlurmJob held = awaitState(id, JobState.PENDING);
    assertThat(held.stateReason()).isEqualTo("JobHeldUser");
    slurm.update(id, JobUpdate.timeLimit(42));
    slurm.update(id, JobUpdate.nice(100));
    assertThat(cluster.cli("scontrol", "show", "job", Long.toString(id)))
        .contains("TimeLimit=00:42:00")
        .contains("Nice=100");
    slurm.update(id, JobUpdate.release());
    awaitState(id, JobState.RUNNING);
  }

  @Test
  void aFourNodePlaceholderLandsInOneNvlinkDomain() {
    // one busy node in domain nvl-0 leaves nvl-1 as the only whole free domain
    long blocker = slurm.submit(placeholder("blocker").exclusive(true).build());
    assertThat(awaitState(blocker, JobState.RUNNING).nodes()).containsExactly("gpu-node-0");
    long id =
        slurm.submit(
            placeholder("nvl")
                .nodes(4)
                .exclusive(true)
                .gresPerNode("gpu:h100:8")
                .constraints("[nvl-0|nvl-1]")
                .build());
    SlurmJob j = awaitState(id, JobState.RUNNING);
    assertThat(j.nodes()).hasSize(4);
    Set<String> domains = new HashSet<>();
    for (String n : j.nodes()) {
      domains.addAll(node(n).features());
    }
    assertThat(domains).as("every node of the job in one NVLink domain").containsExactly("nvl-1");
  }

  @Test
  void v0041ListsTheChangesSinceATime() {
    // v0.0.41 refused a UNIX timestamp as update_time (422) on 24.11: every incremental poll lost
    org.junit.jupiter.api.Assumptions.assumeTrue(
        "24.11".equals(LocalSlurmCluster.version()), "v0.0.41 is served by Slurm 24.05-25.11");
    SlurmClient c =
        SlurmClients.connect(
            cluster.config().withApiVersion(io.kse.slurm.ApiVersion.V0041),
            new SimpleMeterRegistry());
    java.time.Instant before = java.time.Instant.now().minusSeconds(1);
    long id = c.submit(placeholder("since").hold(true).build());
    assertThat(c.jobsChangedSince(before).jobs()).extracting(SlurmJob::id).contains(id);
  }

  /**
   * Issue 28: the states of many jobs in one call (jobs/state on v0.0.41+, 23.11.5+), its query
   * form checked live — the OpenAPI document says a comma list ({@code style: form, explode:
   * false}), slurmctld's source reads each {@code job_id} on its own — and a job Slurm no longer
   * has left out.
   */
  @Test
  void theStatesOfManyJobsInOneCall() throws Exception {
    long a = slurm.submit(placeholder("states-a").hold(true).build());
    long b = slurm.submit(placeholder("states-b").hold(true).build());
    long c = slurm.submit(placeholder("states-c").hold(true).build());
    slurm.cancel(c);
    awaitState(c, JobState.CANCELLED);
    java.util.Map<Long, JobState> states =
        slurm.jobStates(java.util.List.of(a, b, c, 999_999_999L));
    assertThat(states)
        .containsEntry(a, JobState.PENDING)
        .containsEntry(b, JobState.PENDING)
        .containsEntry(c, JobState.CANCELLED)
        .doesNotContainKey(999_999_999L);
    if (slurm.apiVersion() != io.kse.slurm.ApiVersion.V0038) {
      // the two query forms, as slurmrestd answers them: the repeated one is what the client sends
      String v = slurm.apiVersion().id();
      String repeated = "?job_id=" + a + "&job_id=" + b;
      String comma = "?job_id=" + a + "," + b;
      int byRepeated = jobsIn(rawGet("/slurm/" + v + "/jobs/state/" + repeated));
      int byComma = jobsIn(rawGet("/slurm/" + v + "/jobs/state/" + comma));
      System.out.printf(
          "[measure] Slurm %s jobs/state: repeated job_id form -> %d of 2 jobs, comma form -> %d%n",
          LocalSlurmCluster.version(), byRepeated, byComma);
      assertThat(byRepeated).as("the form the client sends").isEqualTo(2);
    }
  }

  /**
   * Issue 47: every job's state in one call where slurmrestd has {@code jobs/state} (24.11, 26.05),
   * other users' jobs too (a takeover catches up by difference); none on 22.05, which lists.
   */
  @Test
  void everyJobsStateInOneCallWhereTheVersionHasIt() {
    long ours = slurm.submit(placeholder("all-states").hold(true).build());
    long theirs =
        Long.parseLong(
            cluster
                .cli(
                    "sbatch",
                    "--parsable",
                    "-p",
                    "training",
                    "--hold",
                    "-o",
                    "/dev/null",
                    "-D",
                    cluster.jobDir().toString(),
                    "--wrap",
                    "sleep 60")
                .trim()
                .split(";")[0]);
    java.util.Optional<java.util.Map<Long, JobState>> all = slurm.allJobStates();
    if (slurm.apiVersion() == io.kse.slurm.ApiVersion.V0038) {
      assertThat(all).as("v0.0.38 has no jobs/state").isEmpty();
    } else {
      assertThat(all)
          .hasValueSatisfying(
              m ->
                  assertThat(m)
                      .containsEntry(ours, JobState.PENDING)
                      .as("another user's job, submitted by root")
                      .containsEntry(theirs, JobState.PENDING));
    }
    slurm.cancel(ours);
    cluster.cli("scancel", Long.toString(theirs));
  }

  /**
   * Issue 28: nodes listed with update_time, on every version: an unchanged table is one small
   * answer, a drained node lists it again.
   */
  @Test
  void theNodeTableIsListedOnlyWhenANodeChanged() throws Exception {
    Thread.sleep(2_100); // slurmctld's times are whole seconds: let earlier changes be older
    java.time.Instant since = java.time.Instant.now().minusSeconds(1);
    boolean whole = slurm.apiVersion().compareTo(io.kse.slurm.ApiVersion.V0045) < 0;
    assertThat(slurm.nodesChangedSince(since).changed())
        .as("nothing changed (before 26.05: always the whole table, see RestSlurmClient)")
        .isEqualTo(whole);
    List<io.kse.slurm.SlurmNode> all = slurm.nodes();
    String node = all.get(all.size() - 1).name();
    try {
      cluster.cli("scontrol", "update", "nodename=" + node, "state=drain", "reason=kse-IT");
      io.kse.slurm.NodeListing after = slurm.nodesChangedSince(since);
      assertThat(after.changed()).isTrue();
      assertThat(after.nodes())
          .filteredOn(n -> n.name().equals(node))
          .singleElement()
          .satisfies(n -> assertThat(n.isDraining()).isTrue());
    } finally {
      cluster.resumeNode(node);
    }
  }

  /** How many jobs an answer lists (-1 if it is not a job list: refused). */
  static int jobsIn(String body) {
    try {
      com.fasterxml.jackson.databind.JsonNode n =
          new com.fasterxml.jackson.databind.ObjectMapper().readTree(body);
      return n != null && n.path("jobs").isArray() ? n.path("jobs").size() : -1;
    } catch (java.io.IOException e) {
      return -1; // not JSON: refused (26.05 answers the comma form so)
    }
  }

  static String rawGet(String path) throws Exception {
    java.net.http.HttpRequest req =
        java.net.http.HttpRequest.newBuilder(cluster.restUrl().resolve(path))
            .header("X-SLURM-USER-NAME", cluster.env("KSE_LAB_JWT_USER"))
            .header(
                "X-SLURM-USER-TOKEN",
                java.nio.file.Files.readString(
                        java.nio.file.Path.of(cluster.env("KSE_LAB_JWT_FILE")))
                    .trim())
            .build();
    // HTTP/1.1 as the bridge speaks it (the default client's h2c upgrade confuses slurmrestd)
    return java.net.http.HttpClient.newBuilder()
        .version(java.net.http.HttpClient.Version.HTTP_1_1)
        .build()
        .send(req, java.net.http.HttpResponse.BodyHandlers.ofString())
        .body();
  }

  @Test
  void aOneSwitchRequestLandsUnderOneLeafSwitch() {
    // the leaf switches of topology/tree are the NVLink domains; 22.05's REST cannot ask for them
    org.junit.jupiter.api.Assumptions.assumeTrue(
        slurm.apiVersion() != io.kse.slurm.ApiVersion.V0038,
        "switch requests need slurmrestd v0.0.41+");
    long blocker = slurm.submit(placeholder("blocker").exclusive(true).build());
    assertThat(awaitState(blocker, JobState.RUNNING).nodes()).containsExactly("gpu-node-0");
    long id =
        slurm.submit(
            placeholder("one-switch")
                .nodes(4)
                .exclusive(true)
                .gresPerNode("gpu:h100:8")
                .switches(1, 60)
                .build());
    SlurmJob j = awaitState(id, JobState.RUNNING);
    Set<String> domains = new HashSet<>();
    for (String n : j.nodes()) {
      domains.addAll(node(n).features());
    }
    assertThat(j.nodes()).hasSize(4);
    assertThat(domains).as("all four nodes under one leaf switch").containsExactly("nvl-1");
  }

  @Test
  void anImpossibleRequestIsRejectedWithSlurmsReason() {
    assertThatThrownBy(() -> slurm.submit(placeholder("nine").gresPerNode("gpu:h100:9").build()))
        .isInstanceOf(SlurmRejectedException.class)
        .hasMessageContaining("Requested node configuration is not available");
    assertThatThrownBy(() -> slurm.submit(placeholder("bad").partition("nope").build()))
        .isInstanceOf(SlurmRejectedException.class)
        .hasMessageContaining("Invalid partition name");
  }

  @Test
  void aStoppedSlurmrestdFailsFastAsUnavailableAndRecovers() {
    SlurmConfig cfg =
        cluster
            .config()
            .withApiVersion(LocalSlurmCluster.expectedApiVersion())
            .withCircuitOpenFor(Duration.ofMillis(500));
    SlurmClient c = SlurmClients.connect(cfg, new SimpleMeterRegistry());
    c.ping();
    cluster.stopRest();
    try {
      long t0 = System.nanoTime();
      assertThatThrownBy(c::ping)
          .isInstanceOf(SlurmUnavailableException.class)
          .hasMessageContaining("cannot reach slurmrestd");
      System.out.println(
          "[measure] ping with slurmrestd stopped failed after "
              + (System.nanoTime() - t0) / 1_000_000
              + " ms (3 attempts with backoff)");
    } finally {
      cluster.startRest();
    }
    await().atMost(Duration.ofSeconds(10)).ignoreExceptions().untilAsserted(c::ping);
  }

  @Test
  void aTokenSlurmctldCannotVerifyIsUnauthorized(@TempDir Path dir) throws Exception {
    // well-formed, unexpired, but signed with another key
    Path forged = Files.writeString(dir.resolve("jwt"), io.kse.slurm.it.Tokens.forged("kse"));
    SlurmConfig cfg = SlurmConfig.of(cluster.restUrl(), Optional.of("kse"), forged);
    assertThatThrownBy(() -> SlurmClients.connect(cfg, new SimpleMeterRegistry()))
        .isInstanceOf(SlurmUnauthorizedException.class)
        // 22.05: 401 at once; 24.11: a ping of DOWN, then 511 on any other call
        .hasMessageMatching("(?s).*(refused the request at once|refused the credentials).*");
  }

  @Test
  void anExpiredTokenIsUnauthorizedAndNamedExpired(@TempDir Path dir) throws Exception {
    String token =
        cluster
            .cli("scontrol", "token", "username=kse", "lifespan=1")
            .trim()
            .replace("SLURM_JWT=", "");
    Thread.sleep(2100);
    Path file = Files.writeString(dir.resolve("jwt"), token);
    SlurmConfig cfg =
        SlurmConfig.of(cluster.restUrl(), Optional.of("kse"), file)
            .withApiVersion(LocalSlurmCluster.expectedApiVersion());
    SlurmClient c = SlurmClients.connect(cfg, new SimpleMeterRegistry());
    assertThatThrownBy(c::nodes)
        .isInstanceOf(SlurmUnauthorizedException.class)
        .hasMessageContaining("expired at");
  }

  static SlurmNode node(String name) {
    List<SlurmNode> nodes = slurm.nodes();
    return nodes.stream().filter(n -> n.name().equals(name)).findFirst().orElseThrow();
  }
}
