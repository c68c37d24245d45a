package io.kse.extender.lifecycle;

import io.kse.extender.k8s.LedgerStore;
import io.kse.policy.PlacementPolicy;
import io.kse.policy.PreemptionLedger;
import io.kse.policy.PreemptionLedger.Charge;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The preemption budgets' memory across restarts and fail-overs. Every replica charges its own
 * ledger as it observes preemptions; the writer also keeps it in a {@link LedgerStore}: when it
 * becomes the writer it first adds what was saved (the previous writer's charges, each victim
 * once), and from then on saves whenever it charged something. It never saves before that restore
 * succeeded, so a writer that could not read the saved charges never overwrites them; placements go
 * on meanwhile with the charges this replica saw itself.
 */
public final class SavedLedger {
  private static final Logger LOG = LoggerFactory.getLogger(SavedLedger.class);

  /** How far back to save when the policy has no budget (one may be added later). */
  static final Duration KEEP_WITHOUT_BUDGET = Duration.ofHours(1);

  private final PreemptionLedger ledger;
  private final LedgerStore store;
  private final Supplier<PlacementPolicy> policy;
  private final Clock clock;
  private final BooleanSupplier isWriter;

  private boolean restored;
  private long savedVersion; // 0: an empty ledger, nothing to save
  private boolean failing;

  public SavedLedger(
      PreemptionLedger ledger,
      LedgerStore store,
      Supplier<PlacementPolicy> policy,
      Clock clock,
      BooleanSupplier isWriter) {
    this.ledger = ledger;
    this.store = store;
    this.policy = policy;
    this.clock = clock;
    this.isWriter = isWriter;
  }

  /** This replica just became the writer: restore now, whatever an earlier term did. */
  public synchronized void takeOver() {
    restored = false;
    tick();
  }

  /** Restores once per writer term, then saves what changed (housekeeping, every second). */
  public synchronized void tick() {
    if (!isWriter.getAsBoolean()) {
      restored = false; // the next term restores again: another writer may have charged meanwhile
      return;
    }
    if (!restored && !restore()) {
      return;
    }
    long v = ledger.version();
    if (v != savedVersion) {
      save(v);
    }
  }

  private boolean restore() {
    try {
      List<Charge> saved = store.load();
      int added = ledger.restore(saved);
      restored = true;
      failing = false;
      LOG.info("preemption_ledger_restored saved={} added={}", saved.size(), added);
      return true;
    } catch (RuntimeException e) {
      failed("restore", e);
      return false;
    }
  }

  private void save(long version) {
    Duration keep = policy.get().longestBudgetWindow().orElse(KEEP_WITHOUT_BUDGET);
    List<Charge> charges = ledger.charges(clock.instant(), keep);
    try {
      store.save(charges);
      savedVersion = version;
      failing = false;
      LOG.debug("preemption_ledger_saved charges={}", charges.size());
    } catch (RuntimeException e) {
      failed("save", e);
    }
  }

  /** Said once per streak of failures (retried every tick), not once a second. */
  private void failed(String what, RuntimeException e) {
    if (!failing) {
      LOG.warn(
          "preemption_ledger_{}_failed error=\"{}\" (budgets count this replica's own"
              + " observations until it works; retried)",
          what,
          io.kse.extender.log.Untrusted.text(String.valueOf(e.getMessage())));
    }
    failing = true;
  }
}
