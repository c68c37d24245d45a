package io.kse.slurm.cli;

import io.kse.slurm.NodeAdmin;
import io.kse.slurm.SlurmNotFoundException;
import io.kse.slurm.SlurmRejectedException;
import io.kse.slurm.SlurmUnavailableException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Drain/resume with {@code scontrol} (munge authentication), for Slurm 22.05 whose slurmrestd has
 * no node update. Needs {@code scontrol}, the cluster's slurm.conf and a munge socket on this host,
 * so it suits an extender running next to slurmctld.
 */
public final class ScontrolNodeAdmin implements NodeAdmin {
  private final String scontrol;
  private final Map<String, String> env;

  /**
   * @param slurmConf the cluster's slurm.conf (SLURM_CONF for scontrol)
   */
  public ScontrolNodeAdmin(String scontrol, String slurmConf) {
    this.scontrol = scontrol;
    this.env = Map.of("SLURM_CONF", slurmConf);
  }

  @Override
  public void drain(String node, String reason) {
    run(List.of(scontrol, "update", "nodename=" + node, "state=drain", "reason=" + reason), node);
  }

  @Override
  public void resume(String node) {
    run(List.of(scontrol, "update", "nodename=" + node, "state=resume"), node);
  }

  private void run(List<String> cmd, String node) {
    try {
      ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
      pb.environment().remove("SLURM_JWT"); // scontrol would use it instead of munge
      pb.environment().putAll(env);
      Process p = pb.start();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
      if (!p.waitFor(30, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        throw new SlurmUnavailableException(String.join(" ", cmd) + ": no answer within 30 s");
      }
      if (p.exitValue() != 0) {
        if (out.contains("Invalid node name")) {
          throw new SlurmNotFoundException("scontrol: no Slurm node " + node + ": " + out);
        }
        if (out.contains("Unable to contact") || out.contains("Socket timed out")) {
          throw new SlurmUnavailableException("scontrol: " + out);
        }
        throw new SlurmRejectedException(
            "scontrol " + String.join(" ", cmd.subList(1, cmd.size())) + " failed: " + out);
      }
    } catch (IOException e) {
      throw new SlurmUnavailableException("cannot run " + scontrol + ": " + e.getMessage(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new SlurmUnavailableException("interrupted running scontrol", e);
    }
  }
}
