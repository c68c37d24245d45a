package io.kse.slurm.cache;

import io.kse.slurm.JobState;
import io.kse.slurm.SlurmClient;
import io.kse.slurm.SlurmJob;
import io.kse.slurm.SlurmNode;
import io.kse.slurm.SlurmRejectedException;
import io.kse.slurm.StateCadence;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Slurm calls a pass makes for our own jobs, and the nodes a placeholder's start proves back.
 */
final class PassReads {
  private static final Logger LOG = LoggerFactory.getLogger(PassReads.class);

  private final SlurmClient client;
  private final StateCadence cadence;
  private final Clock clock;
  private final OurJobs book;
  private final NodeTable nodeTable;

  PassReads(
      SlurmClient client, StateCadence cadence, Clock clock, OurJobs book, NodeTable nodeTable) {
    this.client = client;
    this.cadence = cadence;
    this.clock = clock;
    this.book = book;
    this.nodeTable = nodeTable;
  }

  /**
   * The checks and reads {@link PassPlan} says for our jobs: states in batches where slurmrestd
   * can, then full reads of the changed, the urgent, a few names from hints and the due; {@code
   * betweenReads} after each read (the cache publishes there what hints read meanwhile).
   */
  void checkOurs(Pass pass, Instant now, Runnable betweenReads) {
    boolean batch = client.apiVersion().supportsJobStates();
    PassPlan plan = PassPlan.of(pass.jobs.values(), book, batch, cadence, now);
    List<Long> changed = new ArrayList<>();
    if (!plan.stateChecks().isEmpty()) {
      Map<Long, JobState> got = client.jobStates(plan.stateChecks());
      Instant at = clock.instant();
      pass.observedAt(at); // what the checks saw is published with this pass, as of their answer
      for (long id : plan.stateChecks()) {
        book.stateChecked(id, at);
        JobState s = got.get(id);
        SlurmJob cached = pass.jobs.get(id);
        if (s == null) {
          pass.missed(id, at);
        } else if (cached != null && s != cached.state()) {
          changed.add(id); // read it in full this pass
        }
      }
    }
    for (long id : plan.reads(changed)) {
      long seq = book.beginRead();
      Optional<SlurmJob> j = job(id);
      Instant at = clock.instant();
      if (j.isPresent()) {
        pass.observedJob(j.get(), at, seq);
      } else {
        book.read(id, at);
        pass.missed(id, at);
      }
      betweenReads.run();
    }
  }

  /**
   * A placeholder Slurm just started on a node this cache holds as unavailable proves the node is
   * back (a resume whose trigger was lost, or 22.05, which has no resume trigger): those nodes are
   * read now, so that our taint, kept from the stale node, never keeps a pod from where Slurm
   * placed it until the next node table, minutes on.
   */
  void nodesStartedOn(Pass pass) {
    Set<String> stale = new LinkedHashSet<>();
    for (JobChange c : pass.changes) {
      if (c.started()) {
        for (String n : c.after().orElseThrow().nodes()) {
          SlurmNode known = pass.nodes.get(n);
          if (known != null && known.isUnavailable()) {
            stale.add(n);
          }
        }
      }
    }
    if (!stale.isEmpty()) {
      pass.nodes = nodeTable.read(stale, pass.nodes);
    }
  }

  Optional<SlurmJob> job(long id) {
    return job(client, id);
  }

  /** A job Slurm refuses to read (a name it cannot parse) is one it does not have. */
  static Optional<SlurmJob> job(SlurmClient client, long id) {
    try {
      return client.job(id);
    } catch (SlurmRejectedException e) {
      LOG.debug("job_read_refused slurmJob={} error={}", id, e.getMessage());
      return Optional.empty();
    }
  }
}
