package io.kse.extender.k8s;

import io.kse.policy.PreemptionLedger.Charge;
import java.util.List;
import java.util.Optional;

/**
 * Where the replicas keep the preemption budgets' recent charges, so a restarted or newly elected
 * writer spends the same budget instead of a fresh one. Every replica adds what it saw; a write
 * names the version it read, so two replicas' writes never undo each other.
 */
public interface LedgerStore {
  /** The charges saved and the version they were read at (empty: nothing saved yet). */
  record Saved(List<Charge> charges, Optional<String> version) {}

  /** What is saved now. Throws when it cannot be read. */
  Saved load();

  /**
   * Replaces what is saved, if it is still at {@code version} (empty: nothing was saved); false
   * when another replica wrote in between (read again). Throws when it cannot be written.
   */
  boolean save(List<Charge> charges, Optional<String> version);
}
