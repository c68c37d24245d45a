package io.kse.extender.lifecycle;

import io.kse.extender.k8s.LedgerStore;
import io.kse.policy.PlacementPolicy;
import io.kse.policy.PreemptionLedger;
import io.kse.policy.PreemptionLedger.Charge;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The preemption budgets' memory across restarts and fail-overs. Every replica charges its own
 * ledger as it observes preemptions, and every replica keeps the {@link LedgerStore} the union of
 * what all of them saw: it reads what is saved, adds it to its own ledger (each victim once), and
 * writes back what the store lacks, conditional on the version it read. So a preemption one replica
 * saw while another was down (a writer restarting within its Lease) is in the budget of whichever
 * becomes the writer. It never writes what it has not merged with a fresh read, so what could not
 * be read is never overwritten; placements go on meanwhile with the charges this replica saw.
 */
public final class SavedLedger {
  private static final Logger LOG = LoggerFactory.getLogger(SavedLedger.class);

  /** How far back to save when the policy has no budget (one may be added later). */
  static final Duration KEEP_WITHOUT_BUDGET = Duration.ofHours(1);

  /** How often what other replicas saved is read when this one charged nothing. */
  static final Duration REREAD = Duration.ofSeconds(10);

  /** Reads and writes per sync when other replicas keep writing in between. */
  private static final int ATTEMPTS = 3;

  private final PreemptionLedger ledger;
  private final LedgerStore store;
  private final Supplier<PlacementPolicy> policy;
  private final Clock clock;

  private long syncedVersion = -1; // the ledger's version when it last matched the store
  private Instant lastRead = Instant.MIN;
  private boolean failing;

  public SavedLedger(
      PreemptionLedger ledger, LedgerStore store, Supplier<PlacementPolicy> policy, Clock clock) {
    this.ledger = ledger;
    this.store = store;
    this.policy = policy;
    this.clock = clock;
  }

  /** This replica just became the writer: read what the others saved now, before placing. */
  public synchronized void takeOver() {
    lastRead = Instant.MIN;
    tick();
  }

  /** Syncs with the store when this replica charged something or {@link #REREAD} passed. */
  public synchronized void tick() {
    Instant now = clock.instant();
    if (ledger.version() == syncedVersion && now.isBefore(lastRead.plus(REREAD))) {
      return;
    }
    try {
      for (int i = 0; i < ATTEMPTS; i++) {
        if (sync(now)) {
          failing = false;
          return;
        }
      }
      LOG.debug("preemption_ledger_contended attempts={}", ATTEMPTS); // the next tick tries again
    } catch (RuntimeException e) {
      failed(e);
    }
  }

  /** One read, merge and (if the store lacks something) write; false when a write lost a race. */
  private boolean sync(Instant now) {
    LedgerStore.Saved saved = store.load();
    lastRead = now;
    int added = ledger.restore(saved.charges());
    if (added > 0) {
      LOG.info("preemption_ledger_restored saved={} added={}", saved.charges().size(), added);
    }
    Duration keep = policy.get().longestBudgetWindow().orElse(KEEP_WITHOUT_BUDGET);
    long version = ledger.version(); // before the copy: a charge made meanwhile syncs next tick
    List<Charge> mine = ledger.charges(now, keep);
    if (new HashSet<>(saved.charges()).containsAll(mine)) {
      syncedVersion = version; // nothing to add: old entries go with the next write
      return true;
    }
    if (!store.save(mine, saved.version())) {
      return false;
    }
    syncedVersion = version;
    LOG.debug("preemption_ledger_saved charges={}", mine.size());
    return true;
  }

  /** Said once per streak of failures (retried every tick), not once a second. */
  private void failed(RuntimeException e) {
    if (!failing) {
      LOG.warn(
          "preemption_ledger_sync_failed error=\"{}\" (budgets count this replica's own"
              + " observations until it works; retried)",
          io.kse.extender.log.Untrusted.text(String.valueOf(e.getMessage())));
    }
    failing = true;
  }
}
