package io.kse.policy.drift;

import java.time.Duration;
import java.util.Optional;

/** A partition as the live cluster reports it (preemptMode empty when the API does not say). */
public record LivePartition(
    String name, int priorityTier, Optional<String> preemptMode, Duration graceTime) {}
