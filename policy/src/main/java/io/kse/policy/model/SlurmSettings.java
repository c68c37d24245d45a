package io.kse.policy.model;

import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;

/**
 * How a tier's placeholder jobs look in Slurm.
 *
 * @param timeLimitMinutes default time limit; empty means the partition's (unlimited placeholders)
 * @param fallbackPartition partition used when this tier may not preempt right now (dry run or
 *     budget exhausted); must not preempt anything
 * @param fallbackQos QoS used in the same case
 */
public record SlurmSettings(
    Optional<String> partition,
    Optional<String> qos,
    Optional<String> account,
    OptionalLong priority,
    OptionalInt nice,
    OptionalInt timeLimitMinutes,
    boolean exclusive,
    Optional<String> reservation,
    Optional<String> licenses,
    Optional<String> constraint,
    Optional<String> fallbackPartition,
    Optional<String> fallbackQos) {}
