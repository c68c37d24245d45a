package io.kse.slurm.cache;

import io.kse.slurm.SlurmNode;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Who is told of the cache's changes; a listener that throws is logged and the others still told.
 */
final class CacheListeners {
  private static final Logger LOG = LoggerFactory.getLogger(CacheListeners.class);

  /** Listener of job changes; called on the thread that published them, in observation order. */
  @FunctionalInterface
  interface JobListener {
    void onJobChange(JobChange change);
  }

  /** Listener of node changes (any field). */
  @FunctionalInterface
  interface NodeListener {
    void onNodeChange(Optional<SlurmNode> before, Optional<SlurmNode> after);
  }

  /** Listener of the job table's listings: how many jobs (everyone's) each one read. */
  @FunctionalInterface
  interface ListingListener {
    void onListing(int tableSize);
  }

  private final List<JobListener> jobs = new CopyOnWriteArrayList<>();
  private final List<NodeListener> nodes = new CopyOnWriteArrayList<>();
  private final List<ListingListener> listings = new CopyOnWriteArrayList<>();

  void add(JobListener l) {
    jobs.add(l);
  }

  void add(NodeListener l) {
    nodes.add(l);
  }

  void add(ListingListener l) {
    listings.add(l);
  }

  void listing(int tableSize) {
    for (ListingListener l : listings) {
      try {
        l.onListing(tableSize);
      } catch (RuntimeException e) {
        LOG.error("slurm_listing_listener_failed tableJobs={}", tableSize, e);
      }
    }
  }

  void job(JobChange c) {
    for (JobListener l : jobs) {
      try {
        l.onJobChange(c);
      } catch (RuntimeException e) {
        LOG.error("slurm_job_listener_failed slurmJob={}", c.jobId(), e);
      }
    }
  }

  /** Each node that differs between the two tables, to every node listener. */
  void nodes(Map<String, SlurmNode> before, Map<String, SlurmNode> after) {
    if (nodes.isEmpty() || before.equals(after)) {
      return;
    }
    Set<String> names = new HashSet<>(before.keySet());
    names.addAll(after.keySet());
    for (String n : names) {
      SlurmNode b = before.get(n);
      SlurmNode a = after.get(n);
      if (b == null ? a != null : !b.equals(a)) {
        for (NodeListener l : nodes) {
          try {
            l.onNodeChange(Optional.ofNullable(b), Optional.ofNullable(a));
          } catch (RuntimeException e) {
            LOG.error("slurm_node_listener_failed node={}", n, e);
          }
        }
      }
    }
  }
}
