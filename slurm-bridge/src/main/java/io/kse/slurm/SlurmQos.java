package io.kse.slurm;

import java.time.Duration;
import java.util.Optional;
import java.util.Set;

/**
 * A QoS's preemption settings (from slurmdbd).
 *
 * @param preempts the QoS this one may preempt
 * @param preemptExemptTime minimum run time before its jobs may be preempted
 */
public record SlurmQos(
    String name,
    long priority,
    Set<String> preempts,
    Set<String> preemptModes,
    Duration graceTime,
    Optional<Duration> preemptExemptTime) {
  public SlurmQos {
    preempts = Set.copyOf(preempts);
    preemptModes = Set.copyOf(preemptModes);
  }
}
