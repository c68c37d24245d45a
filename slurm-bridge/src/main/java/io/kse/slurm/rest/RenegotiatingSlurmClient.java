package io.kse.slurm.rest;

import io.kse.slurm.ApiVersion;
import io.kse.slurm.ForwardingSlurmClient;
import io.kse.slurm.JobListing;
import io.kse.slurm.JobState;
import io.kse.slurm.JobSubmission;
import io.kse.slurm.JobUpdate;
import io.kse.slurm.NodeListing;
import io.kse.slurm.SlurmClient;
import io.kse.slurm.SlurmJob;
import io.kse.slurm.SlurmNode;
import io.kse.slurm.SlurmPartition;
import io.kse.slurm.SlurmQos;
import io.kse.slurm.SlurmRejectedException;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The REST client at the version slurmrestd serves now. A Slurm upgrade may drop the version
 * discovered at start (each release serves the last three): every call then answers 404 and the
 * extender would fail until restarted. On a refusal, this client asks whether its version is still
 * served (one ping); if not, it discovers the newest one served, switches to it, and sends the
 * refused call once more — the 404 means slurmrestd never handled it, so even a submission is safe
 * to repeat. A refusal of a version still served is passed on as it was.
 */
public final class RenegotiatingSlurmClient extends ForwardingSlurmClient {
  private static final Logger LOG = LoggerFactory.getLogger(RenegotiatingSlurmClient.class);

  private final SlurmHttp http;
  private final Function<ApiVersion, SlurmClient> atVersion;
  private volatile SlurmClient current;

  public RenegotiatingSlurmClient(
      SlurmHttp http, ApiVersion discovered, Function<ApiVersion, SlurmClient> atVersion) {
    this.http = http;
    this.atVersion = atVersion;
    this.current = atVersion.apply(discovered);
  }

  @Override
  protected SlurmClient delegate() {
    return current;
  }

  private <T> T call(Function<SlurmClient, T> request) {
    SlurmClient asked = current;
    try {
      return request.apply(asked);
    } catch (SlurmRejectedException e) {
      if (!renegotiated(asked)) {
        throw e;
      }
      return request.apply(current);
    }
  }

  private void run(java.util.function.Consumer<SlurmClient> request) {
    call(
        c -> {
          request.accept(c);
          return null;
        });
  }

  /** Whether the version in use is gone and another took its place (by this call or another). */
  private synchronized boolean renegotiated(SlurmClient asked) {
    if (current != asked) {
      return true; // a concurrent call switched already
    }
    ApiVersion old = asked.apiVersion();
    try {
      new RestSlurmClient(http, old).ping();
      return false; // still served: the refusal was the request's own
    } catch (SlurmRejectedException gone) {
      ApiVersion now = VersionProbe.discover(http);
      if (now == old) {
        return false;
      }
      current = atVersion.apply(now);
      LOG.warn(
          "slurm_api_version_changed from={} to={} reason=\"slurmrestd no longer serves {}\"",
          old.id(),
          now.id(),
          old.id());
      return true;
    }
  }

  @Override
  public long submit(JobSubmission job) {
    return call(c -> c.submit(job));
  }

  @Override
  public Optional<SlurmJob> job(long jobId) {
    return call(c -> c.job(jobId));
  }

  @Override
  public JobListing jobsChangedSince(Instant since) {
    return call(c -> c.jobsChangedSince(since));
  }

  @Override
  public List<SlurmJob> allJobs(java.util.function.Predicate<SlurmJob> keep) {
    return call(c -> c.allJobs(keep));
  }

  @Override
  public Map<Long, JobState> jobStates(Collection<Long> ids) {
    return call(c -> c.jobStates(ids));
  }

  @Override
  public NodeListing nodesChangedSince(Instant since) {
    return call(c -> c.nodesChangedSince(since));
  }

  @Override
  public void cancel(long jobId) {
    run(c -> c.cancel(jobId));
  }

  @Override
  public void update(long jobId, JobUpdate update) {
    run(c -> c.update(jobId, update));
  }

  @Override
  public List<SlurmNode> nodes() {
    return call(SlurmClient::nodes);
  }

  @Override
  public Optional<SlurmNode> node(String name) {
    return call(c -> c.node(name));
  }

  @Override
  public List<SlurmPartition> partitions() {
    return call(SlurmClient::partitions);
  }

  @Override
  public List<SlurmQos> qos() {
    return call(SlurmClient::qos);
  }

  @Override
  public void drain(String node, String reason) {
    run(c -> c.drain(node, reason));
  }

  @Override
  public void resume(String node) {
    run(c -> c.resume(node));
  }

  @Override
  public void ping() {
    run(SlurmClient::ping);
  }

  @Override
  public java.util.Optional<io.kse.slurm.SlurmRelease> release() {
    return call(SlurmClient::release);
  }
}
