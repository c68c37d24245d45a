package io.kse.slurm.cache;

import io.kse.slurm.ForwardingSlurmClient;
import io.kse.slurm.JobSubmission;
import io.kse.slurm.JobUpdate;
import io.kse.slurm.SlurmClient;
import java.util.function.LongConsumer;

/**
 * Tells the state cache of every job we submit, change or cancel ({@link
 * SlurmStateCache#tracking}): it checks those at once, where it would otherwise learn of a new job
 * only from slurmctld's whole job table.
 */
final class TrackedSlurmClient extends ForwardingSlurmClient {
  private final SlurmClient delegate;
  private final LongConsumer track;
  private final Runnable lostSubmission;
  private final LongConsumer cancelling;

  /**
   * @param lostSubmission a submission got no answer: slurmctld may have made the job all the same,
   *     and only a listing of its jobs can find it
   * @param cancelling told before each cancel is sent: whatever its answer, the job is one we gave
   *     up
   */
  TrackedSlurmClient(
      SlurmClient delegate, LongConsumer track, Runnable lostSubmission, LongConsumer cancelling) {
    this.delegate = delegate;
    this.track = track;
    this.lostSubmission = lostSubmission;
    this.cancelling = cancelling;
  }

  @Override
  protected SlurmClient delegate() {
    return delegate;
  }

  @Override
  public long submit(JobSubmission job) {
    long id;
    try {
      id = delegate.submit(job);
    } catch (io.kse.slurm.SlurmCallNotSentException e) {
      throw e; // never reached Slurm: no job to look for
    } catch (io.kse.slurm.SlurmUnavailableException e) {
      lostSubmission.run();
      throw e;
    }
    track.accept(id);
    return id;
  }

  @Override
  public void update(long jobId, JobUpdate update) {
    try {
      delegate.update(jobId, update);
    } finally {
      track.accept(jobId);
    }
  }

  @Override
  public void cancel(long jobId) {
    cancelling.accept(jobId);
    try {
      delegate.cancel(jobId);
    } finally {
      track.accept(jobId);
    }
  }

  @Override
  public void close() {
    delegate.close();
  }
}
