package io.kse.policy.replay;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;

/**
 * Seeded synthetic traces: inference arriving with a daily rhythm (a Poisson process whose rate
 * follows a sine over 24 h, peaking at noon of the trace's clock) and a steady training mix. The
 * same shape and seed always give the same trace.
 */
public final class SyntheticTraces {
  private SyntheticTraces() {}

  /**
   * What to generate.
   *
   * @param inferencePerHour mean inference arrivals per hour over a day
   * @param diurnalAmplitude 0 (flat) to 1 (no arrivals at midnight): the rate is {@code mean × (1 +
   *     amplitude × sin)}
   * @param criticalShare share of inference pods of the {@code inference-critical} priority class
   * @param trainingPerHour mean training job submissions per hour
   */
  public record Shape(
      Duration length,
      double inferencePerHour,
      double diurnalAmplitude,
      double criticalShare,
      String inferenceNamespace,
      double trainingPerHour,
      String trainingPartition) {
    public Shape {
      if (length.isNegative() || length.isZero()) {
        throw new IllegalArgumentException("length must be more than 0, got " + length);
      }
      if (inferencePerHour < 0 || trainingPerHour < 0) {
        throw new IllegalArgumentException("rates must be ≥ 0");
      }
      if (diurnalAmplitude < 0 || diurnalAmplitude > 1) {
        throw new IllegalArgumentException(
            "diurnalAmplitude must be 0 to 1, got " + diurnalAmplitude);
      }
      if (criticalShare < 0 || criticalShare > 1) {
        throw new IllegalArgumentException("criticalShare must be 0 to 1, got " + criticalShare);
      }
    }

    /** A day of a lab's mix: 60 inference arrivals and 6 training jobs an hour on average. */
    public static Shape day() {
      return new Shape(Duration.ofHours(24), 60, 0.6, 0.1, "serving", 6, "training");
    }
  }

  private static final long[] GPUS = {1, 2, 4, 8};
  private static final double[] GPU_WEIGHTS = {0.2, 0.2, 0.2, 0.4};
  private static final int[] TRAINING_NODES = {1, 2, 4, 8};
  private static final double[] TRAINING_WEIGHTS = {0.4, 0.3, 0.2, 0.1};

  public static Trace generate(Shape s, long seed) {
    Random r = new Random(seed);
    List<Trace.Inference> inference = new ArrayList<>();
    double peak = s.inferencePerHour() * (1 + s.diurnalAmplitude());
    int n = 0;
    // thinning: candidates at the peak rate, each kept with probability rate(t)/peak
    for (double t = next(r, peak); t < hours(s.length()); t += next(r, peak)) {
      double rate =
          s.inferencePerHour() * (1 + s.diurnalAmplitude() * Math.sin(2 * Math.PI * (t - 6) / 24));
      if (r.nextDouble() * peak > rate) {
        continue;
      }
      boolean critical = r.nextDouble() < s.criticalShare();
      long gpus = GPUS[pick(r, GPU_WEIGHTS)];
      int nodes =
          gpus == 8 && r.nextDouble() < 0.1 ? 2 + r.nextInt(3) : 1; // a few multi-node groups
      double lifetimeMin = Math.min(240, Math.max(1, -30 * Math.log(1 - r.nextDouble())));
      inference.add(
          new Trace.Inference(
              at(t),
              s.inferenceNamespace() + "/llm-" + n++,
              s.inferenceNamespace(),
              Map.of("app", "llm"),
              Map.of(),
              Optional.of(critical ? "inference-critical" : "inference"),
              gpus,
              nodes,
              Duration.ofSeconds(Math.round(lifetimeMin * 60))));
    }
    List<Trace.SlurmJob> training = new ArrayList<>();
    int m = 0;
    for (double t = next(r, s.trainingPerHour());
        t < hours(s.length());
        t += next(r, s.trainingPerHour())) {
      // runtimes from 30 min to 12 h, most of a few hours
      double runtimeH = Math.min(12, Math.max(0.5, Math.exp(0.8 + 0.7 * r.nextGaussian())));
      training.add(
          new Trace.SlurmJob(
              at(t),
              "train-" + m++,
              "user" + r.nextInt(8),
              "research",
              s.trainingPartition(),
              Optional.empty(),
              TRAINING_NODES[pick(r, TRAINING_WEIGHTS)],
              8,
              Duration.ofSeconds(Math.round(runtimeH * 3600)),
              true));
    }
    return new Trace(
        new Trace.Header(
            Trace.VERSION,
            Instant.parse("2026-01-05T00:00:00Z"),
            s.length(),
            "synthetic",
            Optional.of(seed)),
        inference,
        training);
  }

  /** Hours to the next arrival of a Poisson process of this rate (infinite for rate 0). */
  private static double next(Random r, double perHour) {
    return perHour <= 0 ? Double.POSITIVE_INFINITY : -Math.log(1 - r.nextDouble()) / perHour;
  }

  private static int pick(Random r, double[] weights) {
    double x = r.nextDouble();
    for (int i = 0; i < weights.length - 1; i++) {
      x -= weights[i];
      if (x < 0) {
        return i;
      }
    }
    return weights.length - 1;
  }

  private static double hours(Duration d) {
    return d.toMillis() / 3_600_000.0;
  }

  private static Duration at(double hours) {
    return Duration.ofMillis(Math.round(hours * 3_600_000));
  }
}
