package io.kse.policy.model;

/**
 * Part of a GPU (issue 46): a pod asks shares of one GPU through a ResourceClaim, and its
 * placeholder asks as many Slurm shards, which Slurm places on one GPU and accounts; a GPU's shards
 * and its whole allocation never coexist.
 *
 * @param gres Slurm's GRES name of shards (usually {@code shard})
 * @param perGpu shards (and DRA shares) each GPU has: Slurm's gres.conf and the DRA driver's
 *     published capacity must both say this
 * @param capacity the DRA device capacity a claim's request names for shares (e.g. {@code shares})
 */
public record GpuShares(String gres, int perGpu, String capacity) {}
