package io.kse.policy.model;

import java.util.List;
import java.util.Optional;

/**
 * A validated placement and preemption policy. Tiers are ordered from highest to lowest: a tier may
 * only preempt tiers listed after it.
 */
public record Policy(
    ClusterSpec cluster,
    List<Tier> tiers,
    String defaultTier,
    PreemptionSafety preemption,
    Overrides overrides) {

  public static final String API_VERSION = "kse.io/v1alpha1";
  public static final String KIND = "PlacementPolicy";

  public Policy {
    tiers = List.copyOf(tiers);
  }

  public Optional<Tier> tier(String name) {
    return tiers.stream().filter(t -> t.name().equals(name)).findFirst();
  }

  /** Position from the top (0 = highest). */
  public int rank(String tier) {
    for (int i = 0; i < tiers.size(); i++) {
      if (tiers.get(i).name().equals(tier)) {
        return i;
      }
    }
    throw new IllegalArgumentException("no tier " + tier);
  }

  /**
   * The tier a Slurm job belongs to, by its QoS (when the tier names one) or else its partition:
   * how running training jobs are recognised as preemption victims.
   */
  public Optional<Tier> tierOfSlurmJob(String partition, String qos) {
    for (Tier t : tiers) {
      if (t.slurm().qos().isPresent() && t.slurm().qos().get().equals(qos)) {
        return Optional.of(t);
      }
    }
    for (Tier t : tiers) {
      if (t.slurm().qos().isEmpty() && t.slurm().partition().map(partition::equals).orElse(false)) {
        return Optional.of(t);
      }
    }
    return Optional.empty();
  }
}
