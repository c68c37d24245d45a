package io.kse.extender;

import io.kse.slurm.NodeAdmin;
import io.kse.slurm.SlurmClient;
import io.kse.slurm.cli.ScontrolNodeAdmin;

/** How this extender drains and resumes Slurm nodes, as {@code KSE_DRAIN_VIA} says. */
public final class NodeAdmins {
  private NodeAdmins() {}

  public static NodeAdmin of(ExtenderConfig cfg, SlurmClient slurm) {
    return cfg.drainVia() == ExtenderConfig.DrainVia.SCONTROL
        ? new ScontrolNodeAdmin("scontrol", cfg.scontrolConf().orElseThrow())
        : NodeAdmin.rest(slurm);
  }
}
