package io.kse.bench;

import io.kse.slurm.ApiVersion;
import io.kse.slurm.JobListing;
import io.kse.slurm.JobSubmission;
import io.kse.slurm.JobUpdate;
import io.kse.slurm.SlurmClient;
import io.kse.slurm.SlurmJob;
import io.kse.slurm.SlurmNode;
import io.kse.slurm.SlurmPartition;
import io.kse.slurm.SlurmQos;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/** A Slurm that answers one fixed job list: enough to fill the cache for benchmarks. */
final class StaticSlurmClient implements SlurmClient {
  private final List<SlurmJob> jobs;

  StaticSlurmClient(List<SlurmJob> jobs) {
    this.jobs = List.copyOf(jobs);
  }

  @Override
  public ApiVersion apiVersion() {
    return ApiVersion.V0038;
  }

  @Override
  public JobListing jobsChangedSince(Instant since) {
    return new JobListing(true, jobs, Instant.now());
  }

  @Override
  public List<SlurmNode> nodes() {
    return List.of();
  }

  @Override
  public long submit(JobSubmission job) {
    throw new UnsupportedOperationException("benchmarks never submit");
  }

  @Override
  public Optional<SlurmJob> job(long jobId) {
    return jobs.stream().filter(j -> j.id() == jobId).findFirst();
  }

  @Override
  public void cancel(long jobId) {}

  @Override
  public void update(long jobId, JobUpdate update) {}

  @Override
  public List<SlurmPartition> partitions() {
    return List.of();
  }

  @Override
  public List<SlurmQos> qos() {
    return List.of();
  }

  @Override
  public void drain(String node, String reason) {}

  @Override
  public void resume(String node) {}

  @Override
  public void ping() {}
}
