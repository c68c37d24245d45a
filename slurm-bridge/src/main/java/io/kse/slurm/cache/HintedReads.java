package io.kse.slurm.cache;

import io.kse.slurm.SlurmJob;
import java.time.Instant;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;

/** Jobs read for hints, waiting for the pass under way (or the next) to publish them. */
final class HintedReads {
  private record Read(SlurmJob job, Instant at, long seq) {}

  private final Queue<Read> reads = new ConcurrentLinkedQueue<>();

  void add(SlurmJob job, Instant at, long seq) {
    reads.add(new Read(job, at, seq));
  }

  boolean waiting() {
    return !reads.isEmpty();
  }

  /** Hands every waiting read to the pass (under the pass lock); each only once. */
  void applyTo(Pass pass) {
    for (Read r; (r = reads.poll()) != null; ) {
      pass.observedJob(r.job(), r.at(), r.seq()); // an older read does not age the pass
    }
  }
}
