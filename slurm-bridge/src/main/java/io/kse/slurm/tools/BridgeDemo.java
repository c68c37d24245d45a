package io.kse.slurm.tools;

import io.kse.slurm.JobSubmission;
import io.kse.slurm.PlaceholderTag;
import io.kse.slurm.SlurmClient;
import io.kse.slurm.SlurmClients;
import io.kse.slurm.SlurmConfig;
import io.kse.slurm.SlurmJob;
import io.kse.slurm.SlurmNode;
import io.kse.slurm.cache.JobChange;
import io.kse.slurm.cache.SlurmStateCache;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * The README's demo of the Slurm half: connect to slurmrestd, submit a placeholder for a made-up
 * inference pod, watch the cache see Slurm allocate it (preempting training when every GPU is
 * busy), then cancel it. Reads the {@code KSE_SLURM_*} variables (see {@link SlurmConfig}) plus
 * {@code KSE_DEMO_WORKDIR} for the job's working directory.
 */
public final class BridgeDemo {
  private BridgeDemo() {}

  public static void main(String[] args) throws Exception {
    Map<String, String> env = System.getenv();
    SlurmConfig config = SlurmConfig.fromEnv(env);
    SlurmClient slurm = SlurmClients.connect(config, new SimpleMeterRegistry());
    say("connected to " + config.url() + " speaking slurmrestd " + slurm.apiVersion().id());
    for (SlurmNode n : slurm.nodes()) {
      say(
          String.format(
              "  node %-11s %-9s domain=%s gres=%s",
              n.name(), n.state(), String.join(",", n.features()), n.gres()));
    }

    BlockingQueue<JobChange> changes = new LinkedBlockingQueue<>();
    try (SlurmStateCache cache =
        new SlurmStateCache(
            slurm, config.cadence(), Clock.systemUTC(), new SimpleMeterRegistry())) {
      cache.addJobListener(changes::add);
      cache.start();
      waitFor(cache::synced, Duration.ofSeconds(10));

      PlaceholderTag pod = new PlaceholderTag("demo", "llm-0", UUID.randomUUID().toString());
      JobSubmission job =
          JobSubmission.builder(pod)
              .partition("inference")
              .exclusive(true)
              .cpusPerNode(16)
              .gresPerNode("gpu:h100:8")
              .workingDirectory(env.getOrDefault("KSE_DEMO_WORKDIR", "/tmp"))
              .build();
      long start = System.nanoTime();
      long id = cache.tracking(slurm).submit(job); // the cache follows what we submit
      say("submitted placeholder job " + id + " for pod demo/llm-0 (partition inference, 8 GPUs)");

      SlurmJob allocated = null;
      while (allocated == null) {
        JobChange c = changes.poll(30, TimeUnit.SECONDS);
        if (c == null) {
          throw new IllegalStateException("job " + id + " was not allocated within 30 s");
        }
        SlurmJob after = c.after().orElse(null);
        if (after == null) {
          continue;
        }
        if (after.id() == id && after.isAllocated()) {
          allocated = after;
        } else if (after.placeholder().isEmpty()
            && after.restartCount() > 0
            && c.before().map(SlurmJob::isAllocated).orElse(false)) {
          say(
              "  training job "
                  + after.id()
                  + " ("
                  + after.name()
                  + ") was preempted and requeued"
                  + " (state "
                  + after.state()
                  + ", reason "
                  + after.stateReason()
                  + ")");
        }
      }
      say(
          String.format(
              "slurm allocated job %d on %s after %d ms: the pod would be bound there",
              id, allocated.nodes(), (System.nanoTime() - start) / 1_000_000));
      say("cache lookup by pod UID: " + cache.jobFor(pod.uid()).map(SlurmJob::nodes).orElseThrow());

      slurm.cancel(id);
      waitFor(
          () -> cache.job(id).map(j -> j.state().isFinal()).orElse(true), Duration.ofSeconds(10));
      say(
          "cancelled placeholder job "
              + id
              + ": state "
              + cache.job(id).map(SlurmJob::state).orElseThrow());
    }
  }

  private static void waitFor(java.util.function.BooleanSupplier done, Duration max)
      throws InterruptedException {
    long deadline = System.nanoTime() + max.toNanos();
    while (!done.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("timed out after " + max);
      }
      Thread.sleep(50);
    }
  }

  private static void say(String line) {
    System.out.println("[demo] " + line);
  }
}
