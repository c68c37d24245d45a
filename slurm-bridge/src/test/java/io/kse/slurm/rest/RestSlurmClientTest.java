package io.kse.slurm.rest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kse.slurm.ApiVersion;
import io.kse.slurm.JobListing;
import io.kse.slurm.JobState;
import io.kse.slurm.JobSubmission;
import io.kse.slurm.JobUpdate;
import io.kse.slurm.PlaceholderTag;
import io.kse.slurm.SlurmNotFoundException;
import io.kse.slurm.SlurmRejectedException;
import io.kse.slurm.SlurmUnavailableException;
import io.kse.slurm.testing.FakeSlurmRestd;
import io.kse.slurm.testing.FakeSlurmRestd.Answer;
import io.kse.slurm.testing.Fixtures;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The REST client against a scripted slurmrestd: paths, headers, bodies, answers. */
class RestSlurmClientTest {
  private final FakeSlurmRestd restd = new FakeSlurmRestd();
  private static final String TOKEN = SlurmErrorsTest.VALID;

  /** The transport to the fake slurmrestd; the user name comes from the JWT's sun claim. */
  private SlurmHttp http(Duration timeout) {
    return new SlurmHttp(
        restd.url(),
        Optional.empty(),
        TokenSource.of(TOKEN),
        Duration.ofSeconds(1),
        timeout,
        Optional.empty());
  }

  private RestSlurmClient client(ApiVersion v, Duration timeout) {
    return new RestSlurmClient(http(timeout), v);
  }

  private RestSlurmClient client(ApiVersion v) {
    return client(v, Duration.ofSeconds(2));
  }

  @AfterEach
  void stop() {
    restd.close();
  }

  /**
   * Issue 28: the safety net's listing of the whole job table keeps only what the caller accepts,
   * as it is read (at 50,000 jobs the answer is some 150 MB), and counts the bytes it read.
   */
  @Test
  void theWholeJobTableIsReadAsAStreamKeepingOnlyTheJobsAsked() {
    StringBuilder jobs = new StringBuilder();
    for (int i = 1; i <= 500; i++) {
      jobs.append(i == 1 ? "" : ",")
          .append("{\"job_id\":")
          .append(i)
          .append(",\"name\":\"")
          .append(i % 100 == 0 ? "kse-ours" : "train")
          .append("\",\"job_state\":[\"PENDING\"],\"user_name\":\"u\",")
          .append("\"script\":\"a field the bridge never reads\",\"nodes\":\"\"}");
    }
    String body = "{\"jobs\":[" + jobs + "],\"last_update\":{\"number\":1},\"errors\":[]}";
    restd.on("GET /slurm/v0.0.45/jobs/", Answer.ok(body));
    SlurmHttp http = http(Duration.ofSeconds(2));
    List<io.kse.slurm.SlurmJob> kept =
        new RestSlurmClient(http, ApiVersion.V0045).allJobs(j -> j.name().startsWith("kse-"));
    assertThat(kept)
        .extracting(io.kse.slurm.SlurmJob::id)
        .containsExactly(100L, 200L, 300L, 400L, 500L);
    assertThat(http.receivedBytes())
        .isEqualTo(body.getBytes(java.nio.charset.StandardCharsets.UTF_8).length);
  }

  @Test
  void aJobTableRefusedIsAnErrorNamingWhatWasAsked() {
    restd.on(
        "GET /slurm/v0.0.45/jobs/",
        new Answer(
            500,
            "{\"errors\":[{\"description\":\"Unable to query jobs\",\"error_number\":-1}]}",
            0));
    assertThatThrownBy(() -> client(ApiVersion.V0045).allJobs(j -> true))
        .isInstanceOf(io.kse.slurm.SlurmException.class)
        .hasMessageContaining("list jobs");
  }

  @Test
  void aPingOfDownWhereOtherCallsSayTheTokenIsRefusedIsUnauthorized() {
    // Slurm 24.11 with a token slurmctld cannot verify (seen live: SlurmBridgeIT on 24.11)
    restd.on(
        "GET /slurm/v0.0.42/ping/",
        Answer.ok(
            "{\"pings\":[{\"hostname\":\"vm\",\"pinged\":\"DOWN\",\"responding\":false}],"
                + "\"errors\":[],\"warnings\":[]}"));
    restd.on(
        "GET /slurm/v0.0.42/partitions/",
        new Answer(
            511,
            "{\"errors\":[{\"description\":\"Unable to query partitions\",\"error_number\":1007,"
                + "\"error\":\"Protocol authentication error\"}],\"warnings\":[]}",
            0));
    assertThatThrownBy(() -> client(ApiVersion.V0042).ping())
        .isInstanceOf(io.kse.slurm.SlurmUnauthorizedException.class);
  }

  @Test
  void v0041AsksForChangesInSlurmsRelativeTimeFormNotAUnixTimestamp() {
    // Slurm 24.11 live: v0.0.41 answered ?update_time=<epoch> with 422 "Parsing of … for
    // timestamp failed"; ?update_time=now-<seconds> with the changes (or "No job changes")
    Instant now = Instant.ofEpochSecond(1_795_514_800L);
    assertThat(client(ApiVersion.V0041).updateTime(now.minusSeconds(30), now)).isEqualTo("now-32");
    assertThat(client(ApiVersion.V0041).updateTime(now.plusSeconds(5), now)).isEqualTo("now-2");
    assertThat(client(ApiVersion.V0042).updateTime(now.minusSeconds(30), now))
        .isEqualTo("1795514770");
    assertThat(client(ApiVersion.V0038).updateTime(now, now)).isEqualTo("1795514800");
  }

  @Test
  void aDrainRefusedForTheTokensUserSaysWhoMayDrain() {
    // Slurm 26.05 live, REST user not an operator: 422 "Invalid user id" (2010)
    restd.on(
        "POST /slurm/v0.0.45/node/gpu-node-7",
        new Answer(
            422,
            "{\"errors\":[{\"description\":\"Failure to update node gpu-node-7\","
                + "\"error_number\":2010,\"error\":\"Invalid user id\"}],\"warnings\":[]}",
            0));
    assertThatThrownBy(() -> client(ApiVersion.V0045).drain("gpu-node-7", "kse: cordoned"))
        .isInstanceOf(io.kse.slurm.SlurmRejectedException.class)
        .hasMessageContaining("Invalid user id (2010)")
        .hasMessageContaining("only a Slurm operator may drain or resume nodes")
        .hasMessageContaining("KSE_DRAIN_VIA=scontrol");
  }

  @Test
  void aPingOfDownWithTheTokenAcceptedIsAnOutage() {
    restd.on(
        "GET /slurm/v0.0.42/ping/",
        Answer.ok("{\"pings\":[{\"hostname\":\"vm\",\"pinged\":\"DOWN\",\"responding\":false}]}"));
    restd.on("GET /slurm/v0.0.42/partitions/", Answer.ok("{\"partitions\":[]}"));
    assertThatThrownBy(() -> client(ApiVersion.V0042).ping())
        .isInstanceOf(io.kse.slurm.SlurmUnavailableException.class)
        .hasMessageContaining("no slurmctld is responding");
  }

  @Test
  void submitsWithTheTokenHeadersAndReturnsTheJobId() throws Exception {
    restd.on(
        "POST /slurm/v0.0.38/job/submit", Answer.ok(Fixtures.text("v0.0.38", "submit-held.json")));
    long id =
        client(ApiVersion.V0038)
            .submit(
                JobSubmission.builder(new PlaceholderTag("ns", "p", "u-1"))
                    .gresPerNode("gpu:h100:1")
                    .hold(true)
                    .build());
    assertThat(id).isEqualTo(3);
    FakeSlurmRestd.Request r = restd.requests().get(0);
    assertThat(r.header("X-SLURM-USER-TOKEN")).isEqualTo(TOKEN);
    assertThat(r.header("X-SLURM-USER-NAME")).as("taken from the JWT's sun claim").isEqualTo("kse");
    JsonNode body = new ObjectMapper().readTree(r.body());
    assertThat(body.path("job").path("comment").asText()).isEqualTo("kse:v1 pod=ns/p uid=u-1");
    assertThat(body.path("job").path("hold").asBoolean()).isTrue();
  }

  @Test
  void anExternalPlaceholderIsAllocatedThroughJobAllocate() {
    restd.on("POST /slurm/v0.0.44/job/submit", Answer.ok(Fixtures.text("v0.0.44", "submit.json")));
    long id =
        client(ApiVersion.V0044)
            .submit(
                JobSubmission.builder(new PlaceholderTag("ns", "p", "u-1"))
                    .shape(JobSubmission.Shape.EXTERNAL)
                    .build());
    assertThat(id).isEqualTo(4711);
    assertThat(restd.requests())
        .extracting(FakeSlurmRestd.Request::path)
        // not job/allocate: Slurm 25.11 killed a placeholder allocated that way once it had to
        // preempt for it, after the victim was requeued (issue 15)
        .containsExactly("/slurm/v0.0.44/job/submit");
  }

  @Test
  void aSubmitAnswerWithoutJobIdIsARejectionWithSlurmsReason() {
    restd.on(
        "POST /slurm/v0.0.44/job/submit",
        Answer.ok(
            "{\"errors\":[{\"error_number\":2014,\"error\":\"Requested node configuration is not available\"}]}"));
    assertThatThrownBy(
            () ->
                client(ApiVersion.V0044)
                    .submit(JobSubmission.builder(new PlaceholderTag("a", "b", "c")).build()))
        .isInstanceOf(SlurmRejectedException.class)
        .hasMessageContaining("Requested node configuration is not available");
  }

  /**
   * Issue 45, seen live on 26.05.5: a topology/block segment with no free block yet is answered 500
   * "No suitable topology unit found" with the id of the job slurmctld created, pending in the
   * queue. That job is ours: refusing it would tell the pod its placement was rejected while its
   * placeholder waits for a block.
   */
  @Test
  void aSubmitAnsweredWithAnErrorAndAJobIdCreatedTheJob() {
    restd.on(
        "POST /slurm/v0.0.45/job/submit",
        new Answer(500, Fixtures.text("v0.0.45", "submit-500-segment-pending.json"), 0));
    long id =
        client(ApiVersion.V0045)
            .submit(
                JobSubmission.builder(new PlaceholderTag("ns", "tpu", "u-1"))
                    .nodes(4)
                    .segmentSize(4)
                    .build());
    assertThat(id).isEqualTo(28);
  }

  @Test
  void aSubmitAnsweredWithAnErrorAndNoJobIdIsStillRefused() {
    restd.on(
        "POST /slurm/v0.0.45/job/submit",
        new Answer(
            500,
            "{\"errors\":[{\"error_number\":2014,\"error\":\"Requested node configuration is"
                + " not available\"}]}",
            0));
    assertThatThrownBy(
            () ->
                client(ApiVersion.V0045)
                    .submit(JobSubmission.builder(new PlaceholderTag("a", "b", "c")).build()))
        .isInstanceOf(SlurmRejectedException.class)
        .hasMessageContaining("Requested node configuration is not available");
  }

  @Test
  void readsJobsIncrementallyAndReports304AsUnchanged() {
    restd.on("GET /slurm/v0.0.44/jobs/", Answer.ok(Fixtures.text("v0.0.44", "jobs.json")));
    restd.on("GET /slurm/v0.0.44/jobs/?update_time=1795326582", new Answer(304, "", 0));
    RestSlurmClient c = client(ApiVersion.V0044);
    JobListing first = c.jobsChangedSince(Instant.EPOCH);
    assertThat(first.changed()).isTrue();
    assertThat(first.jobs()).hasSize(2);
    assertThat(first.asOf())
        .as("one second before Slurm's own last_update")
        .isEqualTo(Instant.ofEpochSecond(1795326582));
    JobListing second = c.jobsChangedSince(first.asOf());
    assertThat(second.changed()).isFalse();
    assertThat(second.asOf()).isEqualTo(first.asOf());
  }

  @Test
  void anEmptyListWithTheNoChangesWarningIsUnchangedNotAnEmptyQueue() {
    // v0.0.42-v0.0.44 as Slurm 25.11 answers a quiet poll: taken for a complete listing before,
    // so every quiet poll looked like "every job is gone" and forced a full listing
    restd.on("GET /slurm/v0.0.44/jobs/", Answer.ok(Fixtures.text("v0.0.44", "jobs.json")));
    restd.on(
        "GET /slurm/v0.0.44/jobs/?update_time=1795326582",
        Answer.ok(
            "{\"jobs\":[],\"last_backfill\":{\"set\":true,\"number\":0},"
                + "\"last_update\":{\"set\":true,\"number\":1795326583},"
                + "\"warnings\":[{\"description\":\"No job changes since update_time=1795326582\","
                + "\"source\":\"_op_handler_jobs\"}],\"errors\":[]}"));
    RestSlurmClient c = client(ApiVersion.V0044);
    JobListing first = c.jobsChangedSince(Instant.EPOCH);
    JobListing quiet = c.jobsChangedSince(first.asOf());
    assertThat(quiet.changed()).isFalse();
    assertThat(quiet.asOf()).isEqualTo(first.asOf());
  }

  @Test
  void aMissingJobIsEmptyAndCancellingItIsNotAnError() {
    restd.on(
        "GET /slurm/v0.0.38/job/999",
        new Answer(500, Fixtures.text("v0.0.38", "job-missing.json"), 0));
    restd.on(
        "DELETE /slurm/v0.0.38/job/999",
        new Answer(500, Fixtures.text("v0.0.38", "job-missing.json"), 0));
    RestSlurmClient c = client(ApiVersion.V0038);
    assertThat(c.job(999)).isEmpty();
    c.cancel(999);
    assertThat(restd.requests())
        .extracting(FakeSlurmRestd.Request::method)
        .containsExactly("GET", "DELETE");
  }

  @Test
  void anUpdateAnsweredWith200AndErrorsIsARejection() {
    // what 22.05 answers to {"priority":"INFINITE"}
    restd.on(
        "POST /slurm/v0.0.38/job/5",
        Answer.ok("{\"errors\":[{\"error_number\":9001,\"error\":\"Failure during parsing\"}]}"));
    assertThatThrownBy(() -> client(ApiVersion.V0038).update(5, JobUpdate.nice(3)))
        .isInstanceOf(SlurmRejectedException.class)
        .hasMessageContaining("Failure during parsing");
  }

  @Test
  void drainsThroughTheNodeEndpointOfNewerVersions() throws Exception {
    restd.on("POST /slurm/v0.0.42/node/gpu-node-3", Answer.ok("{\"errors\":[]}"));
    client(ApiVersion.V0042).drain("gpu-node-3", "kse: cordoned");
    JsonNode body = new ObjectMapper().readTree(restd.requests().get(0).body());
    assertThat(body.toString()).isEqualTo("{\"state\":[\"DRAIN\"],\"reason\":\"kse: cordoned\"}");
  }

  @Test
  void anUnknownNodeIsNotFound() {
    restd.on(
        "POST /slurm/v0.0.44/node/nope",
        new Answer(
            500, "{\"errors\":[{\"errno\":2018,\"error\":\"Invalid node name specified\"}]}", 0));
    assertThatThrownBy(() -> client(ApiVersion.V0044).resume("nope"))
        .isInstanceOf(SlurmNotFoundException.class);
  }

  @Test
  void aSlowServerTimesOutAsUnavailable() {
    restd.on(
        "GET /slurm/v0.0.38/ping", new Answer(200, Fixtures.text("v0.0.38", "ping.json"), 1500));
    assertThatThrownBy(() -> client(ApiVersion.V0038, Duration.ofMillis(200)).ping())
        .isInstanceOf(SlurmUnavailableException.class)
        .hasMessageContaining("within 200 ms");
  }

  @Test
  void aClosedPortIsUnavailable() {
    restd.close();
    assertThatThrownBy(() -> client(ApiVersion.V0038).ping())
        .isInstanceOf(SlurmUnavailableException.class)
        .hasMessageContaining("cannot reach slurmrestd");
  }

  @Test
  void discoversTheNewestServedVersion() {
    restd.on("GET /slurm/v0.0.41/ping/", Answer.ok(Fixtures.text("v0.0.41", "ping.json")));
    restd.on("GET /slurm/v0.0.38/ping", Answer.ok(Fixtures.text("v0.0.38", "ping.json")));
    SlurmHttp http = http(Duration.ofSeconds(1));
    assertThat(VersionProbe.discover(http)).isEqualTo(ApiVersion.V0041);
    assertThat(restd.requests())
        .extracting(FakeSlurmRestd.Request::path)
        .containsExactly(
            "/slurm/v0.0.45/ping/",
            "/slurm/v0.0.44/ping/",
            "/slurm/v0.0.43/ping/",
            "/slurm/v0.0.42/ping/",
            "/slurm/v0.0.41/ping/");
  }

  @Test
  void discoveryFailsWithEveryVersionTriedWhenNoneIsServed() {
    SlurmHttp http = http(Duration.ofSeconds(1));
    assertThatThrownBy(() -> VersionProbe.discover(http))
        .isInstanceOf(SlurmRejectedException.class)
        .hasMessageContaining("v0.0.44")
        .hasMessageContaining("v0.0.38");
  }

  @Test
  void jobStatesAsksForManyJobsPerCallNamingEachIdAndLeavesOutJobsSlurmHasNot() {
    java.util.List<Long> ids = new java.util.ArrayList<>();
    StringBuilder first = new StringBuilder();
    for (long id = 1; id <= RestSlurmClient.JOB_STATES_PER_CALL; id++) {
      ids.add(id);
      first.append(first.length() == 0 ? '?' : '&').append("job_id=").append(id);
    }
    ids.add(9001L);
    restd.on(
        "GET /slurm/v0.0.45/jobs/state/" + first,
        Answer.ok(
            "{\"jobs\":[{\"job_id\":\"1\",\"state\":[\"RUNNING\"]},"
                + "{\"job_id\":\"2\",\"state\":[\"PENDING\",\"REQUEUED\"]}]}"));
    restd.on(
        "GET /slurm/v0.0.45/jobs/state/?job_id=9001",
        Answer.ok("{\"jobs\":[{\"job_id\":\"9001\",\"state\":[\"CANCELLED\"]}]}"));
    Map<Long, JobState> states = client(ApiVersion.V0045).jobStates(ids);
    assertThat(states)
        .containsExactly(
            Map.entry(1L, JobState.RUNNING),
            Map.entry(2L, JobState.PENDING),
            Map.entry(9001L, JobState.CANCELLED));
    assertThat(restd.requests()).as("201 ids: two calls").hasSize(2);
  }

  /**
   * Issue 47: every job's state, for a takeover's catching up. At 50,000 jobs slurmrestd began its
   * answer after more than a call's 5 s (the scale rig): it waits as long as a listing does.
   */
  @Test
  void everyJobsStateIsOneCallWithoutIdsWaitingAsAListingDoesAndAnArraysTasksAreLeftOut() {
    // the answer of 24.11 for two jobs and an array of two tasks, as seen live, begun after 1 s
    restd.on(
        "GET /slurm/v0.0.42/jobs/state/",
        new Answer(
            200,
            "{\"jobs\":[{\"job_id\":\"1\",\"state\":[\"PENDING\"]},"
                + "{\"job_id\":\"2\",\"state\":[\"RUNNING\"]},"
                + "{\"job_id\":\"3_1\",\"state\":[\"PENDING\"]},"
                + "{\"job_id\":\"3_2\",\"state\":[\"PENDING\"]}],\"errors\":[]}",
            1_000));
    assertThat(client(ApiVersion.V0042, Duration.ofMillis(300)).allJobStates())
        .hasValue(Map.of(1L, JobState.PENDING, 2L, JobState.RUNNING));
    assertThat(restd.requests()).hasSize(1);
    assertThat(client(ApiVersion.V0038).allJobStates())
        .as("22.05 has no jobs/state: the caller lists the table")
        .isEmpty();
    assertThat(restd.requests()).as("and nothing is asked").hasSize(1);
  }

  @Test
  void jobStatesOn2205AsksJobByJob() {
    restd.on("GET /slurm/v0.0.38/job/7", Answer.ok(Fixtures.text("v0.0.38", "job-held.json")));
    restd.on(
        "GET /slurm/v0.0.38/job/8",
        new Answer(
            500, "{\"errors\":[{\"errno\":2017,\"error\":\"Invalid job id specified\"}]}", 0));
    assertThat(client(ApiVersion.V0038).jobStates(List.of(7L, 8L))).containsOnlyKeys(7L);
  }

  @Test
  void nodesAreListedOnlyWhenOneChangedWhereSlurmrestdCanSay() {
    Instant since = Instant.ofEpochSecond(Instant.now().getEpochSecond() - 10);
    String nodes = Fixtures.text("v0.0.45", "nodes.json");
    String unchanged =
        "{\"nodes\":[],\"warnings\":[{\"description\":\"No node changes since update_time\"}]}";
    RestSlurmClient c = client(ApiVersion.V0045);
    // and never with DETAIL (slurmctld gathers every node's GRES usage for it, unused here)
    String query =
        "GET /slurm/v0.0.45/nodes/?update_time="
            + c.updateTime(since, Instant.now())
            + "&flags=ALL&flags=MIXED";
    restd.on(query, Answer.ok(unchanged));
    assertThat(c.nodesChangedSince(since).changed()).isFalse();
    restd.on(query, Answer.ok(nodes));
    assertThat(c.nodesChangedSince(since).nodes()).isNotEmpty();
    // before 26.05 slurmrestd cannot say (an unchanged partition table is an error): the table
    restd.on("GET /slurm/v0.0.38/nodes", Answer.ok(Fixtures.text("v0.0.38", "nodes.json")));
    assertThat(client(ApiVersion.V0038).nodesChangedSince(since).changed()).isTrue();
  }

  @Test
  void oneNodeIsReadWithoutDetailWhereTheVersionLetsUsChoose() {
    // slurmrestd answers node/NAME as it answers nodes: a list (the fixture's second node is asked)
    String nodes = Fixtures.text("v0.0.45", "nodes.json");
    restd.on("GET /slurm/v0.0.45/node/gpu-node-1?flags=ALL&flags=MIXED", Answer.ok(nodes));
    assertThat(client(ApiVersion.V0045).node("gpu-node-1"))
        .get()
        .extracting(n -> n.name())
        .isEqualTo("gpu-node-1");
    restd.on(
        "GET /slurm/v0.0.38/node/gpu-node-0", Answer.ok(Fixtures.text("v0.0.38", "nodes.json")));
    assertThat(client(ApiVersion.V0038).node("gpu-node-0")).isPresent();
    restd.on("GET /slurm/v0.0.38/node/gpu-node-99", Answer.ok("{\"nodes\":[],\"errors\":[]}"));
    assertThat(client(ApiVersion.V0038).node("gpu-node-99")).isEmpty();
    assertThatThrownBy(() -> client(ApiVersion.V0045).node("a/../jobs"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("not a Slurm node name");
  }
}
