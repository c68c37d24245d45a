package io.kse.extender.dra;

/**
 * A GPU a DRA driver published in a node's ResourceSlice, with the index Slurm numbers it by.
 *
 * @param index the device's index attribute (the NVIDIA DRA driver's {@code index}): Slurm's {@code
 *     IDX} for the same GPU, as both follow the driver's minor numbering; for a MIG device, the
 *     index Slurm's gres.conf gives that MIG slice, which the driver must publish (see
 *     docs/gpu-sharing.md, "MIG")
 * @param profile the MIG profile of a MIG device (its {@code profile} attribute); empty for a GPU
 */
public record GpuDevice(String driver, String pool, String name, long index, String profile) {
  /** A whole GPU. */
  public GpuDevice(String driver, String pool, String name, long index) {
    this(driver, pool, name, index, "");
  }
}
