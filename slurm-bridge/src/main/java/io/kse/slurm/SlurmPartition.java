package io.kse.slurm;

import java.time.Duration;
import java.util.Optional;

/**
 * A partition's preemption-relevant settings.
 *
 * @param preemptMode e.g. {@code REQUEUE} or {@code OFF}; empty where the API version does not
 *     report it (v0.0.41+)
 */
public record SlurmPartition(
    String name, int priorityTier, Optional<String> preemptMode, Duration graceTime) {}
