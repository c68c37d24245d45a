package io.kse.slurm;

import java.time.Duration;

/**
 * Every meter the bridge registers ({@code kse.slurm.*}; Prometheus {@code kse_slurm_*}), in one
 * place; the extender's own are in its {@code ExtenderMetrics}.
 */
public final class MetricNames {
  /** Slurm REST calls, including retries: tags operation, api_version, outcome. */
  public static final String REQUEST = "kse.slurm.request.duration";

  /** Histogram buckets of one remote call's latency (a Slurm REST call, an API write). */
  public static Duration[] callBuckets() {
    return new Duration[] {
      Duration.ofMillis(5),
      Duration.ofMillis(10),
      Duration.ofMillis(25),
      Duration.ofMillis(50),
      Duration.ofMillis(100),
      Duration.ofMillis(250),
      Duration.ofMillis(500),
      Duration.ofSeconds(1),
      Duration.ofSeconds(2),
      Duration.ofSeconds(5),
      Duration.ofSeconds(10)
    };
  }

  /** The circuit breaker: 0 closed, 1 open, 2 half-open. */
  public static final String CIRCUIT = "kse.slurm.circuit.state";

  /** Bytes read from slurmrestd. */
  public static final String RESPONSE_BYTES = "kse.slurm.response";

  /** One poll of the job/node cache. */
  public static final String CACHE_POLL = "kse.slurm.cache.poll.duration";

  /** A change's age when the cache first saw it (from Slurm's own timestamps). */
  public static final String CACHE_VISIBLE_LAG = "kse.slurm.cache.visible.lag";

  /** Seconds since the cache's last successful poll. */
  public static final String CACHE_AGE = "kse.slurm.cache.age";

  /** Jobs in the cache. */
  public static final String CACHE_JOBS = "kse.slurm.cache.jobs";

  /** Jobs carrying our placeholder tag that another Slurm user submitted (ignored). */
  public static final String IMPOSTOR_JOBS = "kse.slurm.impostor.jobs";

  /**
   * When the JWT in use expires, seconds since the epoch ({@code exp}); NaN when it has no expiry
   * or cannot be read.
   */
  public static final String TOKEN_EXPIRY = "kse.slurm.token.expiry.timestamp";

  /**
   * Reads of slurmctld's whole job table that ended: tag how, {@code listing} (every job, in full)
   * or {@code catch_up} (every job's state, then the jobs made since read one by one).
   */
  public static final String JOB_TABLE_READS = "kse.slurm.job.table.reads";

  public static final String HINTED_READS = "kse.slurm.hinted.polls";

  private MetricNames() {}
}
