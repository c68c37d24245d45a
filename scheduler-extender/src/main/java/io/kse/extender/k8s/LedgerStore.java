package io.kse.extender.k8s;

import io.kse.policy.PreemptionLedger.Charge;
import java.util.List;

/**
 * Where the writer keeps the preemption budgets' recent charges, so a restarted or newly elected
 * writer spends the same budget instead of a fresh one.
 */
public interface LedgerStore {
  /** The charges saved last; empty when nothing was saved yet. Throws when it cannot be read. */
  List<Charge> load();

  /** Replaces what is saved. Throws when it cannot be written. */
  void save(List<Charge> charges);
}
