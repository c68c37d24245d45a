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

  /**
   * Whether a placeholder of tier {@code taker} is charged for the nodes it took from a Slurm job
   * of this partition and QoS: empty when it is, else why not. A job of a tier {@code taker} may
   * not preempt lost its nodes some other way (requeued, or preempted by a higher partition's job)
   * before the placeholder took them; a job of no tier the policy knows is charged. The extender's
   * attribution and the policy replay both ask this.
   */
  public Optional<String> chargeRefused(String taker, String victimPartition, String victimQos) {
    Optional<Tier> mine = tier(taker);
    Optional<Tier> victim = tierOfSlurmJob(victimPartition, victimQos);
    if (mine.isPresent()
        && victim.isPresent()
        && !mine.get().mayPreempt().contains(victim.get().name())) {
      return Optional.of("tier " + taker + " may not preempt tier " + victim.get().name());
    }
    return Optional.empty();
  }
}
