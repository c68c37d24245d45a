package io.kse.extender;

import io.kse.slurm.ApiVersion;
import io.kse.slurm.JobListing;
import io.kse.slurm.JobSubmission;
import io.kse.slurm.JobUpdate;
import io.kse.slurm.SlurmClient;
import io.kse.slurm.SlurmJob;
import io.kse.slurm.SlurmNode;
import io.kse.slurm.SlurmPartition;
import io.kse.slurm.SlurmQos;
import io.kse.slurm.SlurmUnavailableException;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * A client that is connected later (version discovery needs slurmrestd up): until then every call
 * fails as unavailable, so the service can start, answer health checks and report not-ready.
 */
final class DeferredSlurmClient implements SlurmClient {
  private volatile SlurmClient delegate;
  private volatile String lastError = "not connected yet";

  void connected(SlurmClient c) {
    delegate = c;
  }

  void failed(String error) {
    lastError = error;
  }

  boolean isConnected() {
    return delegate != null;
  }

  private SlurmClient d() {
    SlurmClient c = delegate;
    if (c == null) {
      throw new SlurmUnavailableException("slurmrestd not connected: " + lastError);
    }
    return c;
  }

  @Override
  public ApiVersion apiVersion() {
    return d().apiVersion();
  }

  @Override
  public long submit(JobSubmission job) {
    return d().submit(job);
  }

  @Override
  public Optional<SlurmJob> job(long jobId) {
    return d().job(jobId);
  }

  @Override
  public JobListing jobsChangedSince(Instant since) {
    return d().jobsChangedSince(since);
  }

  @Override
  public java.util.Map<Long, io.kse.slurm.JobState> jobStates(java.util.Collection<Long> ids) {
    return d().jobStates(ids);
  }

  @Override
  public io.kse.slurm.NodeListing nodesChangedSince(Instant since) {
    return d().nodesChangedSince(since);
  }

  @Override
  public void cancel(long jobId) {
    d().cancel(jobId);
  }

  @Override
  public void update(long jobId, JobUpdate update) {
    d().update(jobId, update);
  }

  @Override
  public List<SlurmNode> nodes() {
    return d().nodes();
  }

  @Override
  public List<SlurmPartition> partitions() {
    return d().partitions();
  }

  @Override
  public List<SlurmQos> qos() {
    return d().qos();
  }

  @Override
  public void drain(String node, String reason) {
    d().drain(node, reason);
  }

  @Override
  public void resume(String node) {
    d().resume(node);
  }

  @Override
  public void ping() {
    d().ping();
  }

  @Override
  public void close() {
    if (delegate != null) {
      delegate.close();
    }
  }
}
