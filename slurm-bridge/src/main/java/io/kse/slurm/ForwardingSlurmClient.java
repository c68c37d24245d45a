package io.kse.slurm;

import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** A client that passes every call to {@link #delegate()}: decorators override what they add to. */
public abstract class ForwardingSlurmClient implements SlurmClient {

  /** Where calls go; may throw (a client not connected yet). */
  protected abstract SlurmClient delegate();

  @Override
  public ApiVersion apiVersion() {
    return delegate().apiVersion();
  }

  @Override
  public long submit(JobSubmission job) {
    return delegate().submit(job);
  }

  @Override
  public Optional<SlurmJob> job(long jobId) {
    return delegate().job(jobId);
  }

  @Override
  public JobListing jobsChangedSince(Instant since) {
    return delegate().jobsChangedSince(since);
  }

  @Override
  public List<SlurmJob> allJobs(java.util.function.Predicate<SlurmJob> keep) {
    return delegate().allJobs(keep);
  }

  @Override
  public Map<Long, JobState> jobStates(Collection<Long> ids) {
    return delegate().jobStates(ids);
  }

  @Override
  public Optional<Map<Long, JobState>> allJobStates() {
    return delegate().allJobStates();
  }

  @Override
  public NodeListing nodesChangedSince(Instant since) {
    return delegate().nodesChangedSince(since);
  }

  @Override
  public Optional<SlurmRelease> release() {
    return delegate().release();
  }

  @Override
  public void cancel(long jobId) {
    delegate().cancel(jobId);
  }

  @Override
  public void update(long jobId, JobUpdate update) {
    delegate().update(jobId, update);
  }

  @Override
  public List<SlurmNode> nodes() {
    return delegate().nodes();
  }

  @Override
  public Optional<SlurmNode> node(String name) {
    return delegate().node(name);
  }

  @Override
  public List<SlurmPartition> partitions() {
    return delegate().partitions();
  }

  @Override
  public List<SlurmQos> qos() {
    return delegate().qos();
  }

  @Override
  public void drain(String node, String reason) {
    delegate().drain(node, reason);
  }

  @Override
  public void resume(String node) {
    delegate().resume(node);
  }

  @Override
  public void ping() {
    delegate().ping();
  }
}
