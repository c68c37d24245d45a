package io.kse.slurm;

import java.time.Duration;

/**
 * How often the state cache looks at what, so that its steady-state cost to slurmctld grows with
 * our own placeholders, not with the cluster: the jobs it waits on every {@code poll}, running
 * placeholders read in full every {@code runningRead}, the node table every {@code nodes}, and
 * slurmctld's whole job table only every {@code safetyNet} (and at start and takeover), to find
 * orphans and anything a lost hook missed.
 *
 * @param poll one pass: state checks of our live jobs (batched where slurmrestd can), reads of the
 *     jobs that changed or that we wait on
 * @param pendingRead a pending placeholder is read in full this often (its pending reason)
 * @param runningRead a running placeholder is read in full this often (whether Slurm chose it for
 *     preemption, which its state alone does not show; on 22.05, also whether it ended)
 * @param nodes the node table this often
 * @param safetyNet the whole job table this often
 * @param maxReadsPerPoll full reads of single jobs per pass; more wait for the next pass
 * @param maxStateIdsPerPoll job ids whose state one pass checks; more wait for the next pass
 * @param listingTimeout how long the whole job table may take to begin arriving: slurmrestd builds
 *     it whole first (54 s at 20,000 jobs on 10,000 nodes with Slurm 26.05, measured), longer than
 *     any other call may take
 */
public record StateCadence(
    Duration poll,
    Duration pendingRead,
    Duration runningRead,
    Duration nodes,
    Duration safetyNet,
    int maxReadsPerPoll,
    int maxStateIdsPerPoll,
    Duration listingTimeout) {

  public StateCadence {
    if (maxReadsPerPoll < 1 || maxStateIdsPerPoll < 1) {
      throw new IllegalArgumentException("a pass must be allowed at least one read and one check");
    }
  }

  /** The production cadence around a poll interval and a safety-net period. */
  public static StateCadence of(
      Duration poll, Duration runningRead, Duration nodes, Duration safetyNet, int maxReads) {
    Duration pendingRead = poll.multipliedBy(4);
    return new StateCadence(
        poll, pendingRead, runningRead, nodes, safetyNet, maxReads, 1000, Duration.ofMinutes(10));
  }

  /**
   * Every job and the node table every pass, the job table every {@code safetyNet}: for tests that
   * change a fake Slurm and poll by hand.
   */
  public static StateCadence everyPass(Duration poll, Duration safetyNet) {
    return new StateCadence(
        poll,
        Duration.ZERO,
        Duration.ZERO,
        Duration.ZERO,
        safetyNet,
        1000,
        1000,
        Duration.ofMinutes(10));
  }
}
