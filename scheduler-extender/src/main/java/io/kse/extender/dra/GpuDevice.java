package io.kse.extender.dra;

/**
 * A GPU a DRA driver published in a node's ResourceSlice, with the index Slurm numbers it by.
 *
 * @param index the device's index attribute (the NVIDIA DRA driver's {@code index}): Slurm's {@code
 *     IDX} for the same GPU, as both follow the driver's minor numbering
 */
public record GpuDevice(String driver, String pool, String name, long index) {}
