package io.kse.policy.drift;

import java.time.Duration;
import java.util.Optional;
import java.util.Set;

/** A QoS as the live cluster (slurmdbd) reports it. */
public record LiveQos(
    String name, Set<String> preempts, Duration graceTime, Optional<Duration> preemptExemptTime) {
  public LiveQos {
    preempts = Set.copyOf(preempts);
  }
}
