package io.kse.policy.drift;

import io.kse.policy.Durations;
import io.kse.policy.model.ClusterSpec;
import io.kse.policy.model.Policy;
import io.kse.policy.model.Tier;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * Where the live Slurm configuration disagrees with what the policy assumes. It compares meaning,
 * not numbers: a preempting tier's partition must outrank its victims' (whatever the PriorityTier
 * values), a victim's QoS must be in the preemptor's Preempt list, grace and exempt times must
 * match. Every line names the tier and the Slurm object, so an SRE knows what to change.
 */
public final class SlurmDrift {
  private SlurmDrift() {}

  /**
   * @param qos the live QoS, or empty when they cannot be read (no slurmdbd): then a QoS-mode
   *     policy is reported as unverifiable
   */
  public static List<String> differences(
      Policy policy, List<LivePartition> partitions, Optional<List<LiveQos>> qos) {
    List<String> out = new ArrayList<>();
    Map<String, LivePartition> parts = new HashMap<>();
    partitions.forEach(p -> parts.put(p.name(), p));
    for (Tier t : policy.tiers()) {
      for (String p : names(t.slurm().partition(), t.slurm().fallbackPartition())) {
        if (!parts.containsKey(p)) {
          out.add("tier " + t.name() + ": partition " + p + " does not exist in Slurm");
        }
      }
    }
    placeholdersHoldWhilePreempted(policy, parts, out);
    if (policy.cluster().preemptMode() == ClusterSpec.PreemptMode.PARTITION) {
      partitionMode(policy, parts, out);
    } else if (qos.isEmpty()) {
      out.add(
          "cluster.preemptMode is qos, but the QoS definitions cannot be read (is slurmdbd there?)");
    } else {
      qosMode(policy, qos.get(), out);
    }
    return out;
  }

  /**
   * A preempted placeholder must keep its GPUs until its pod has stopped (docs/gpu-ownership.md):
   * that needs a grace time (Slurm frees a job's nodes at once without one) and a PreemptMode that
   * ends the job (SUSPEND would hand the GPUs to the preemptor while the pod still runs).
   */
  private static void placeholdersHoldWhilePreempted(
      Policy policy, Map<String, LivePartition> parts, List<String> out) {
    for (Tier t : policy.tiers()) {
      boolean ofPods = t.match().isPresent() || t.name().equals(policy.defaultTier());
      if (!ofPods || !t.preemptible()) {
        continue;
      }
      if (t.graceTime().isZero()) {
        out.add(
            "tier "
                + t.name()
                + ": its pods' placeholders are preemptible but graceTime is 0, so Slurm would"
                + " give their GPUs to the next job at once while the pods still run; set"
                + " graceTime (and GraceTime in Slurm) to at least the time its pods take to stop");
      }
      t.slurm()
          .partition()
          .map(parts::get)
          .flatMap(LivePartition::preemptMode)
          .filter(m -> m.toUpperCase(java.util.Locale.ROOT).matches(".*(SUSPEND|GANG).*"))
          .ifPresent(
              m ->
                  out.add(
                      "tier "
                          + t.name()
                          + ": partition "
                          + t.slurm().partition().get()
                          + " has PreemptMode="
                          + m
                          + ", which suspends a preempted placeholder and lets another job use"
                          + " the GPUs its pods hold; use CANCEL or REQUEUE"));
    }
  }

  private static void partitionMode(
      Policy policy, Map<String, LivePartition> parts, List<String> out) {
    for (Tier t : policy.tiers()) {
      LivePartition own = t.slurm().partition().map(parts::get).orElse(null);
      for (String victimName : t.mayPreempt()) {
        Tier victim = policy.tier(victimName).orElseThrow();
        LivePartition vp = victim.slurm().partition().map(parts::get).orElse(null);
        if (own == null || vp == null) {
          continue; // reported as missing above
        }
        if (own.priorityTier() <= vp.priorityTier()) {
          out.add(
              "tier "
                  + t.name()
                  + " may preempt "
                  + victimName
                  + ", but partition "
                  + own.name()
                  + " (PriorityTier="
                  + own.priorityTier()
                  + ") does not outrank partition "
                  + vp.name()
                  + " (PriorityTier="
                  + vp.priorityTier()
                  + ")");
        }
        if (vp.preemptMode().map("OFF"::equals).orElse(false)) {
          out.add(
              "tier "
                  + victimName
                  + " is preemptible, but partition "
                  + vp.name()
                  + " has PreemptMode=OFF");
        }
        t.slurm()
            .fallbackPartition()
            .map(parts::get)
            .ifPresent(
                fb -> {
                  if (fb.priorityTier() > vp.priorityTier()) {
                    out.add(
                        "tier "
                            + t.name()
                            + ": fallback partition "
                            + fb.name()
                            + " (PriorityTier="
                            + fb.priorityTier()
                            + ") outranks partition "
                            + vp.name()
                            + " (PriorityTier="
                            + vp.priorityTier()
                            + "), so placeholders meant not to preempt still could");
                  }
                });
      }
      if (own != null && !t.graceTime().isZero() && !own.graceTime().equals(t.graceTime())) {
        out.add(
            "tier "
                + t.name()
                + ": graceTime "
                + Durations.slurm(t.graceTime())
                + ", but partition "
                + own.name()
                + " has GraceTime="
                + own.graceTime().getSeconds());
      }
    }
    if (parts.values().stream().anyMatch(p -> p.preemptMode().isEmpty())) {
      out.add(
          "note: this slurmrestd version does not report partition PreemptMode; it was not compared");
    }
  }

  private static void qosMode(Policy policy, List<LiveQos> live, List<String> out) {
    Map<String, LiveQos> byName = new HashMap<>();
    live.forEach(q -> byName.put(q.name(), q));
    for (Tier t : policy.tiers()) {
      for (String q : names(t.slurm().qos(), t.slurm().fallbackQos())) {
        if (!byName.containsKey(q)) {
          out.add("tier " + t.name() + ": QoS " + q + " does not exist in Slurm");
        }
      }
      t.slurm()
          .fallbackQos()
          .map(byName::get)
          .filter(q -> !q.preempts().isEmpty())
          .ifPresent(
              q ->
                  out.add(
                      "tier "
                          + t.name()
                          + ": fallback QoS "
                          + q.name()
                          + " may preempt "
                          + new TreeSet<>(q.preempts())
                          + ", but it exists so that placeholders do not preempt"));
      Optional<LiveQos> own = t.slurm().qos().map(byName::get);
      if (own.isEmpty()) {
        continue;
      }
      Set<String> wanted = new LinkedHashSet<>();
      for (String v : t.mayPreempt()) {
        policy.tier(v).flatMap(x -> x.slurm().qos()).ifPresent(wanted::add);
      }
      for (String w : wanted) {
        if (!own.get().preempts().contains(w)) {
          out.add(
              "tier "
                  + t.name()
                  + " may preempt QoS "
                  + w
                  + ", but QoS "
                  + own.get().name()
                  + " has no "
                  + w
                  + " in its Preempt list");
        }
      }
      for (String extra : new TreeSet<>(own.get().preempts())) {
        if (!wanted.contains(extra)) {
          out.add(
              "QoS "
                  + own.get().name()
                  + " (tier "
                  + t.name()
                  + ") may preempt QoS "
                  + extra
                  + ", which the policy does not allow");
        }
      }
      if (t.preemptible() && !own.get().graceTime().equals(t.graceTime())) {
        out.add(
            "tier "
                + t.name()
                + ": graceTime "
                + Durations.slurm(t.graceTime())
                + ", but QoS "
                + own.get().name()
                + " has GraceTime="
                + own.get().graceTime().getSeconds());
      }
      Duration min = policy.preemption().minRuntime().get(t.name());
      Optional<Duration> exempt = own.get().preemptExemptTime();
      if (min != null && !exempt.equals(Optional.of(min))) {
        out.add(
            "tier "
                + t.name()
                + ": minRuntime "
                + Durations.slurm(min)
                + ", but QoS "
                + own.get().name()
                + " has PreemptExemptTime="
                + exempt.map(Durations::slurm).orElse("unset"));
      } else if (min == null && exempt.isPresent() && !exempt.get().isZero()) {
        out.add(
            "tier "
                + t.name()
                + ": QoS "
                + own.get().name()
                + " has PreemptExemptTime="
                + Durations.slurm(exempt.get())
                + ", which the policy does not know (preemption.minRuntime)");
      }
    }
  }

  private static List<String> names(Optional<String> a, Optional<String> b) {
    List<String> out = new ArrayList<>();
    a.ifPresent(out::add);
    b.filter(x -> !out.contains(x)).ifPresent(out::add);
    return out;
  }
}
