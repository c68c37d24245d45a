package io.kse.policy;

import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;

/**
 * The placeholder job the policy asks for, in Slurm's terms; the extender hands it to the bridge.
 *
 * @param gresPerNode e.g. {@code gpu:h100:4}, several joined with commas
 * @param constraint Slurm feature expression, including an NVLink-domain one-of ({@code [a|b]})
 * @param topology switches/segment requests that are not feature constraints
 * @param preempting whether this placeholder goes where it may preempt (false: tier fallback)
 */
public record JobSpec(
    Optional<String> partition,
    Optional<String> qos,
    Optional<String> account,
    OptionalLong priority,
    OptionalInt nice,
    int nodes,
    int cpusPerNode,
    long memoryPerNodeMb,
    Optional<String> gresPerNode,
    OptionalInt timeLimitMinutes,
    Optional<String> constraint,
    TopologyRequest topology,
    boolean exclusive,
    Optional<String> reservation,
    Optional<String> licenses,
    boolean preempting) {}
