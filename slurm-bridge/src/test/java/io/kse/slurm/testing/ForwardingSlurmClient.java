package io.kse.slurm.testing;

import io.kse.slurm.ApiVersion;
import io.kse.slurm.JobListing;
import io.kse.slurm.JobSubmission;
import io.kse.slurm.JobUpdate;
import io.kse.slurm.SlurmClient;
import io.kse.slurm.SlurmJob;
import io.kse.slurm.SlurmNode;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/** A client that forwards to another, calling {@link #before} first: for fault injection. */
public class ForwardingSlurmClient implements SlurmClient {
  private final SlurmClient delegate;

  public ForwardingSlurmClient(SlurmClient delegate) {
    this.delegate = delegate;
  }

  /** Runs before every call; throw from it to inject a failure. */
  protected void before() {}

  @Override
  public ApiVersion apiVersion() {
    return delegate.apiVersion();
  }

  @Override
  public long submit(JobSubmission job) {
    before();
    return delegate.submit(job);
  }

  @Override
  public Optional<SlurmJob> job(long jobId) {
    before();
    return delegate.job(jobId);
  }

  @Override
  public JobListing jobsChangedSince(Instant since) {
    before();
    return delegate.jobsChangedSince(since);
  }

  @Override
  public java.util.Map<Long, io.kse.slurm.JobState> jobStates(java.util.Collection<Long> ids) {
    before();
    return delegate.jobStates(ids);
  }

  @Override
  public java.util.Optional<java.util.Map<Long, io.kse.slurm.JobState>> allJobStates() {
    before();
    return delegate.allJobStates();
  }

  @Override
  public io.kse.slurm.NodeListing nodesChangedSince(Instant since) {
    before();
    return delegate.nodesChangedSince(since);
  }

  @Override
  public void cancel(long jobId) {
    before();
    delegate.cancel(jobId);
  }

  @Override
  public void update(long jobId, JobUpdate update) {
    before();
    delegate.update(jobId, update);
  }

  @Override
  public List<SlurmNode> nodes() {
    before();
    return delegate.nodes();
  }

  @Override
  public List<io.kse.slurm.SlurmPartition> partitions() {
    before();
    return delegate.partitions();
  }

  @Override
  public List<io.kse.slurm.SlurmQos> qos() {
    before();
    return delegate.qos();
  }

  @Override
  public void drain(String node, String reason) {
    before();
    delegate.drain(node, reason);
  }

  @Override
  public void resume(String node) {
    before();
    delegate.resume(node);
  }

  @Override
  public void ping() {
    before();
    delegate.ping();
  }

  @Override
  public java.util.Optional<io.kse.slurm.SlurmRelease> release() {
    before();
    return delegate.release();
  }
}
