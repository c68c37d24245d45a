package io.kse.policy;

import java.time.Instant;

/** A running Slurm job as the preemption planner sees it (from the bridge's cache). */
public record RunningJob(
    long id, String name, String partition, String qos, long gpus, int nodes, Instant startTime) {}
