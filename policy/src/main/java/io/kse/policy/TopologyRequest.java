package io.kse.policy;

import java.time.Duration;

/** Topology a placeholder needs beyond feature constraints. */
public sealed interface TopologyRequest {
  /** No topology requirement. */
  record None() implements TopologyRequest {}

  /**
   * At most {@code count} leaf switches, waiting up to {@code maxWait} for them (Slurm --switches).
   */
  record Switches(int count, Duration maxWait) implements TopologyRequest {}

  /** topology/block: nodes in segments of {@code size} within one block (Slurm --segment). */
  record Segment(int size) implements TopologyRequest {}

  TopologyRequest NONE = new None();
}
