package io.kse.slurm.rest;

import com.fasterxml.jackson.databind.JsonNode;
import io.kse.slurm.ApiVersion;
import io.kse.slurm.JobListing;
import io.kse.slurm.JobState;
import io.kse.slurm.JobSubmission;
import io.kse.slurm.JobUpdate;
import io.kse.slurm.NodeListing;
import io.kse.slurm.SlurmClient;
import io.kse.slurm.SlurmJob;
import io.kse.slurm.SlurmNode;
import io.kse.slurm.SlurmNotFoundException;
import io.kse.slurm.SlurmPartition;
import io.kse.slurm.SlurmQos;
import io.kse.slurm.SlurmRejectedException;
import io.kse.slurm.SlurmUnavailableException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** {@link SlurmClient} over slurmrestd, for one API version. No retries here: see the decorator. */
public final class RestSlurmClient implements SlurmClient {
  private static final Logger LOG = LoggerFactory.getLogger(RestSlurmClient.class);
  private final SlurmHttp http;
  private final ApiVersion version;
  private final RequestBodies bodies;

  /** v0.0.41+ end collection paths with a slash, as their OpenAPI documents do. */
  private final String slash;

  /** How long the whole job table may take to begin arriving (slurmrestd builds it first). */
  private final Duration listingTimeout;

  public RestSlurmClient(SlurmHttp http, ApiVersion version) {
    this(http, version, Duration.ofMinutes(10));
  }

  public RestSlurmClient(SlurmHttp http, ApiVersion version, Duration listingTimeout) {
    this.listingTimeout = listingTimeout;
    this.http = http;
    this.version = version;
    this.bodies = new RequestBodies(version);
    this.slash = version == ApiVersion.V0038 ? "" : "/";
  }

  @Override
  public ApiVersion apiVersion() {
    return version;
  }

  private String path(String rest) {
    return version.slurmPath() + "/" + rest;
  }

  @Override
  public long submit(JobSubmission job) {
    String what = "submit job for " + job.tag().namespace() + "/" + job.tag().name();
    // external placeholders too go through job/submit (with the EXTERNAL_JOB flag): job/allocate
    // returns while a job that must preempt is still pending, and Slurm then kills it as an
    // interactive job whose client went away, after its victim was requeued for nothing
    String endpoint = "job/submit";
    // a job id in an error answer means the job exists: slurmctld created it and only its first
    // scheduling attempt failed (26.05 answers 500 "No suitable topology unit found" for a
    // topology/block segment that has no free block yet, the job pending in the queue)
    SlurmHttp.Response answer =
        http.post(what, path(endpoint), bodies.submit(job), r -> submittedId(r) > 0);
    JsonNode resp = answer.body();
    long id = submittedId(resp);
    if (answer.status() != 200 && id > 0) {
      LOG.info(
          "submit_noted slurmJob={} status={} notes={}",
          id,
          answer.status(),
          SlurmErrors.errors(resp));
    }
    if (id <= 0) {
      // 200 without a job id: Slurm put the reason in errors[] (with a job id it is only a note,
      // e.g. 2042 "Job is in held state")
      throw new SlurmRejectedException(
          what + " failed: no job id in the answer: " + SlurmErrors.errors(resp));
    }
    return id;
  }

  private static long submittedId(JsonNode resp) {
    return resp.path("job_id").asLong(resp.path("result").path("job_id").asLong(0));
  }

  @Override
  public Optional<SlurmJob> job(long jobId) {
    try {
      JsonNode jobs = http.get("get job " + jobId, path("job/" + jobId)).body().path("jobs");
      return jobs.isArray() && !jobs.isEmpty()
          ? Optional.of(SlurmJson.job(jobs.get(0)))
          : Optional.empty();
    } catch (SlurmNotFoundException e) {
      return Optional.empty();
    }
  }

  @Override
  public JobListing jobsChangedSince(Instant since) {
    // slurmctld answers "no change" when its last update <= update_time, in whole seconds, so a
    // second change within the second of the first would be missed: always ask from one second
    // before what this listing covers (costs one repeated listing after each change).
    Instant requested = Instant.ofEpochSecond(Instant.now().getEpochSecond());
    String query = since.getEpochSecond() > 0 ? "?update_time=" + updateTime(since, requested) : "";
    SlurmHttp.Response resp =
        http.get("list jobs", path("jobs" + slash + query), "jobs", SlurmJson.JOB_FIELDS);
    if (resp.status() == 304 || noChangeSince(resp.body())) {
      return JobListing.unchanged(since);
    }
    List<SlurmJob> jobs = new ArrayList<>();
    resp.body().path("jobs").forEach(j -> jobs.add(SlurmJson.job(j)));
    Instant covered = SlurmJson.time(resp.body().path("last_update")).orElse(requested);
    Instant asOf = (covered.isBefore(requested) ? covered : requested).minusSeconds(1);
    return new JobListing(true, jobs, asOf);
  }

  /**
   * The job table read as a stream, each job kept or dropped as it is read ({@link
   * SlurmHttp#stream}): the extender holds our placeholders, never the table.
   */
  @Override
  public List<SlurmJob> allJobs(java.util.function.Predicate<SlurmJob> keep) {
    List<SlurmJob> out = new ArrayList<>();
    http.stream(
        "list jobs",
        path("jobs" + slash),
        "jobs",
        SlurmJson.JOB_FIELDS,
        listingTimeout,
        j -> {
          SlurmJob job = SlurmJson.job(j);
          if (keep.test(job)) {
            out.add(job);
          }
        });
    return out;
  }

  /** Ids per {@code jobs/state} call: a request line of about 2 KB. */
  static final int JOB_STATES_PER_CALL = 200;

  /**
   * {@code GET jobs/state} (v0.0.41+, Slurm 23.11.5+): only {@code job_id} and state, for the ids
   * asked, each named once ({@code ?job_id=1&job_id=2}: the form slurmrestd parses into a list,
   * seen live on 24.11 and 26.05, SlurmBridgeIT); v0.0.38 asks job by job.
   */
  @Override
  public java.util.Map<Long, JobState> jobStates(java.util.Collection<Long> ids) {
    if (!version.supportsJobStates()) {
      return SlurmClient.super.jobStates(ids);
    }
    java.util.Map<Long, JobState> out = new java.util.LinkedHashMap<>();
    List<Long> all = List.copyOf(ids);
    for (int from = 0; from < all.size(); from += JOB_STATES_PER_CALL) {
      List<Long> chunk = all.subList(from, Math.min(all.size(), from + JOB_STATES_PER_CALL));
      StringBuilder query = new StringBuilder();
      for (long id : chunk) {
        query.append(query.length() == 0 ? '?' : '&').append("job_id=").append(id);
      }
      JsonNode body = http.get("job states", path("jobs/state" + slash + query)).body();
      for (JsonNode j : body.path("jobs")) {
        out.put(SlurmJson.number(j.path("job_id")).orElse(0), SlurmJson.state(j));
      }
    }
    return out;
  }

  /**
   * {@code GET jobs/state} with no ids (v0.0.41+): every job, only its id and state — seen live on
   * 24.11 and 26.05, where an array's tasks come as {@code 12_3} (skipped: no placeholder is one).
   * Read as a stream with a listing's timeout: at 50,000 jobs slurmrestd took longer than a single
   * call's 5 s to begin its answer (the scale rig).
   */
  @Override
  public Optional<java.util.Map<Long, JobState>> allJobStates() {
    if (!version.supportsJobStates()) {
      return Optional.empty();
    }
    java.util.Map<Long, JobState> out = new java.util.HashMap<>();
    http.stream(
        "all job states",
        path("jobs/state" + slash),
        "jobs",
        JOB_STATE_FIELDS,
        listingTimeout,
        j -> SlurmJson.number(j.path("job_id")).ifPresent(id -> out.put(id, SlurmJson.state(j))));
    return Optional.of(out);
  }

  private static final java.util.Set<String> JOB_STATE_FIELDS = java.util.Set.of("job_id", "state");

  /**
   * How {@code update_time} is written for this version. v0.0.40 and v0.0.41 (Slurm 24.05–25.11)
   * refuse a UNIX timestamp there (422 "Parsing of … for timestamp failed", every incremental poll
   * lost until the full resync; seen live on 24.11) and take Slurm's relative form {@code
   * now-<seconds>}: the seconds since {@code since} by this clock, plus 2 so that a slurmctld clock
   * a little ahead of ours still lists every change (a longer window only lists more).
   */
  String updateTime(Instant since, Instant now) {
    if (version == ApiVersion.V0041) {
      long ago = Math.max(0, now.getEpochSecond() - since.getEpochSecond());
      return "now-" + (ago + 2);
    }
    return Long.toString(since.getEpochSecond());
  }

  /**
   * v0.0.42–v0.0.44 answer an unchanged queue with 200, an empty job list and the warning "No job
   * changes since update_time", not 304: that is "unchanged", never "Slurm has no jobs".
   */
  static boolean noChangeSince(com.fasterxml.jackson.databind.JsonNode body) {
    if (body == null || body.path("jobs").size() > 0) {
      return false;
    }
    for (com.fasterxml.jackson.databind.JsonNode w : body.path("warnings")) {
      String text = w.path("description").asText("") + " " + w.path("warning").asText("");
      if (text.contains("No job changes since update_time")) {
        return true;
      }
    }
    return false;
  }

  @Override
  public void cancel(long jobId) {
    try {
      http.delete("cancel job " + jobId, path("job/" + jobId));
    } catch (SlurmNotFoundException e) {
      // already gone: cancelling is idempotent
    }
  }

  @Override
  public void update(long jobId, JobUpdate update) {
    JsonNode resp =
        http.post("update job " + jobId, path("job/" + jobId), bodies.update(update)).body();
    if (!SlurmErrors.errors(resp).isEmpty()) {
      // 22.05 answers some invalid updates with HTTP 200 and the reason in errors[]
      throw new SlurmRejectedException(
          "update job " + jobId + " failed: " + SlurmErrors.errors(resp));
    }
  }

  @Override
  public List<SlurmNode> nodes() {
    return listNodes(nodeFlags('?')).nodes();
  }

  /**
   * What slurmctld is asked to show of nodes: everything but DETAIL where the version lets us
   * choose. DETAIL is slurmrestd's default and makes slurmctld gather every node's GRES usage
   * ("slow, so don't by default", its source says); measured at 10,000 nodes on 26.05, idle: 37-41
   * ms of slurmctld time per listing with it, 29-32 without.
   */
  private String nodeFlags(char sep) {
    return version.supportsNodeShowFlags() ? sep + "flags=ALL&flags=MIXED" : "";
  }

  /** One node ({@code GET node/NAME}), empty when Slurm has no node of that name. */
  @Override
  public Optional<SlurmNode> node(String name) {
    if (!name.matches("[A-Za-z0-9._-]{1,200}")) {
      throw new IllegalArgumentException("not a Slurm node name: '" + name + "'");
    }
    try {
      JsonNode nodes =
          http.get("get node " + name, path("node/" + name + nodeFlags('?'))).body().path("nodes");
      for (JsonNode n : nodes) {
        if (name.equals(n.path("name").asText())) {
          return Optional.of(SlurmJson.node(n));
        }
      }
      return Optional.empty();
    } catch (SlurmNotFoundException e) {
      return Optional.empty();
    }
  }

  /**
   * Nodes with {@code update_time}, as jobs are listed: slurmctld's whole node table only when a
   * node changed. An answer with no node at all is read as "unchanged" (v0.0.42+ say so with an
   * empty list and a warning; a cluster never has no nodes). Read as a stream, each node pruned to
   * what the bridge uses as it is read: at 10,000 nodes the answer is tens of MB.
   */
  @Override
  public NodeListing nodesChangedSince(Instant since) {
    // slurmrestd before 26.05 loads the partitions with the same update_time to fill in each
    // node's partitions, and answers HTTP 500 ("Unable to query partitions", errno -1) when they
    // did not change, whether nodes did or not (seen live on 22.05 and 24.11, SlurmBridgeIT):
    // there the whole table is the only reliable answer. 26.05 (v0.0.45) answers as jobs do.
    if (since.getEpochSecond() <= 0 || version.compareTo(ApiVersion.V0045) < 0) {
      return listNodes(nodeFlags('?'));
    }
    Instant requested = Instant.ofEpochSecond(Instant.now().getEpochSecond());
    NodeListing l = listNodes("?update_time=" + updateTime(since, requested) + nodeFlags('&'));
    if (l.nodes().isEmpty()) {
      return NodeListing.unchanged(since);
    }
    Instant asOf = (l.asOf().isBefore(requested) ? l.asOf() : requested).minusSeconds(1);
    return new NodeListing(true, l.nodes(), asOf);
  }

  private NodeListing listNodes(String query) {
    List<SlurmNode> nodes = new ArrayList<>();
    JsonNode rest =
        http.stream(
            "list nodes",
            path("nodes" + slash + query),
            "nodes",
            SlurmJson.NODE_FIELDS,
            listingTimeout,
            n -> nodes.add(SlurmJson.node(n)));
    Instant covered =
        SlurmJson.time(rest.path("last_update")).orElse(Instant.now()).minusSeconds(1);
    return new NodeListing(true, nodes, covered);
  }

  @Override
  public List<SlurmPartition> partitions() {
    List<SlurmPartition> out = new ArrayList<>();
    http.get("list partitions", path("partitions" + slash))
        .body()
        .path("partitions")
        .forEach(p -> out.add(SlurmJson.partition(p)));
    return out;
  }

  @Override
  public List<SlurmQos> qos() {
    JsonNode body;
    try {
      body = http.get("list qos", "/slurmdb/" + version.id() + "/qos" + slash).body();
    } catch (SlurmRejectedException e) {
      throw new SlurmRejectedException(
          "QoS definitions come from slurmdbd, which this slurmrestd"
              + " does not serve (no accounting, or started without the openapi/dbv* plugins): "
              + e.getMessage(),
          e);
    }
    List<SlurmQos> out = new ArrayList<>();
    // 22.05 names the list "QOS", later versions "qos"
    (body.has("QOS") ? body.get("QOS") : body.path("qos")).forEach(q -> out.add(SlurmJson.qos(q)));
    return out;
  }

  @Override
  public void drain(String node, String reason) {
    if (reason == null || reason.isBlank()) {
      throw new SlurmRejectedException(
          "drain " + node + ": Slurm requires a reason to drain a node");
    }
    setNodeState(node, "DRAIN", reason);
  }

  @Override
  public void resume(String node) {
    setNodeState(node, "RESUME", null);
  }

  private void setNodeState(String node, String state, String reason) {
    JsonNode body = bodies.nodeState(node, state, reason);
    String what = state.toLowerCase(java.util.Locale.ROOT) + " node " + node;
    JsonNode resp;
    try {
      resp = http.post(what, path("node/" + encode(node)), body).body();
    } catch (SlurmRejectedException e) {
      if (e.getMessage().contains("(2010)")) { // seen live on Slurm 26.05: 422 "Invalid user id"
        throw new SlurmRejectedException(
            e.getMessage()
                + "; only a Slurm operator may drain or resume nodes: make the token's user one"
                + " (sacctmgr modify user <name> set adminlevel=operator) or set"
                + " KSE_DRAIN_VIA=scontrol",
            e);
      }
      throw e;
    }
    if (!SlurmErrors.errors(resp).isEmpty()) {
      throw new SlurmRejectedException(what + " failed: " + SlurmErrors.errors(resp));
    }
  }

  /** The release the last ping's answer named (a Slurm upgrade changes it: each ping reads it). */
  private volatile java.util.Optional<io.kse.slurm.SlurmRelease> release =
      java.util.Optional.empty();

  @Override
  public java.util.Optional<io.kse.slurm.SlurmRelease> release() {
    if (release.isEmpty()) {
      JsonNode answer = http.get("ping", path("ping" + slash)).body();
      release = io.kse.slurm.SlurmRelease.fromMeta(answer.path("meta"));
    }
    return release;
  }

  @Override
  public void ping() {
    JsonNode answer = http.get("ping", path("ping" + slash)).body();
    io.kse.slurm.SlurmRelease.fromMeta(answer.path("meta"))
        .ifPresent(r -> release = java.util.Optional.of(r));
    JsonNode pings = answer.path("pings");
    for (JsonNode p : pings) {
      boolean up =
          p.has("responding")
              ? p.path("responding").asBoolean()
              : "UP".equalsIgnoreCase(p.path("ping").asText(p.path("pinged").asText()));
      if (up) {
        return;
      }
    }
    // Slurm 24.11 answers a token slurmctld refuses with a ping of "DOWN" (HTTP 200, no error),
    // where every other call says 511 / error 1007: ask one of those before blaming slurmctld
    http.get("list partitions (is the token refused?)", path("partitions" + slash));
    throw new SlurmUnavailableException("ping: no slurmctld is responding: " + pings);
  }

  private static String encode(String s) {
    return URLEncoder.encode(s, StandardCharsets.UTF_8);
  }
}
