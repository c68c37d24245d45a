package io.kse.policy;

import io.kse.policy.model.Policy;
import io.kse.policy.model.TpuSlices;
import java.util.ArrayList;
import java.util.List;

/**
 * TPU slices as an operator lays them out ({@code tpu-v5p-slice:2x2x4:2,tpu-v5p-slice:2x4x4:1}: two
 * 2x2x4 slices and one 2x4x4), rendered from that one description into everything that must agree:
 * Slurm's node lines (GRES and the slice's feature), {@code gres.conf}, the topology/block blocks
 * (one per slice, host order = worker order), and the Kubernetes labels of each host. Hosts are
 * numbered {@code prefix0, prefix1, ...} slice after slice.
 */
public final class TpuLayout {
  /** One kind of slice and how many the cluster has. */
  public record Slices(String type, SliceShape shape, int count) {}

  private final TpuSlices tpu;
  private final List<Slices> slices;

  private TpuLayout(TpuSlices tpu, List<Slices> slices) {
    this.tpu = tpu;
    this.slices = List.copyOf(slices);
  }

  /**
   * The layout {@code spec} (TYPE:TOPOLOGY:COUNT, comma-separated) for the policy's TPU types, or
   * {@link IllegalArgumentException} naming what is wrong.
   */
  public static TpuLayout parse(Policy policy, String spec) {
    TpuSlices tpu =
        policy
            .cluster()
            .tpu()
            .orElseThrow(
                () -> new IllegalArgumentException("the policy names no TPU slices (cluster.tpu)"));
    List<Slices> out = new ArrayList<>();
    for (String part : spec.split(",")) {
      String[] f = part.trim().split(":");
      if (f.length != 3) {
        throw new IllegalArgumentException(
            "\"" + part + "\": expected TYPE:TOPOLOGY:COUNT, e.g. tpu-v5p-slice:2x2x4:2");
      }
      TpuSlices.Accelerator acc =
          tpu.accelerator(f[0])
              .orElseThrow(
                  () ->
                      new IllegalArgumentException(
                          "\""
                              + part
                              + "\": "
                              + f[0]
                              + " is no TPU type of the policy (cluster.tpu.accelerators: "
                              + new java.util.TreeSet<>(tpu.accelerators().keySet())
                              + ")"));
      SliceShape shape = SliceShape.parse(f[1]);
      if (!acc.topologies().contains(shape.topology())) {
        throw new IllegalArgumentException(
            "\""
                + part
                + "\": the policy lists no "
                + f[0]
                + " topology "
                + f[1]
                + " (its topologies: "
                + acc.topologies()
                + ")");
      }
      int count;
      try {
        count = Integer.parseInt(f[2]);
      } catch (NumberFormatException e) {
        count = 0;
      }
      if (count < 1 || count > 4096) {
        throw new IllegalArgumentException("\"" + part + "\": the count must be 1..4096");
      }
      shape.hosts(acc.chipsPerHost()); // refuses a shape that does not fill whole hosts
      out.add(new Slices(f[0], shape, count));
    }
    return new TpuLayout(tpu, out);
  }

  /**
   * slurm.conf, gres.conf, topology.conf and the Kubernetes labels, for hosts named {@code prefix}N
   * whose chips are the device files {@code devices} (e.g. {@code /dev/accel[0-3]}).
   */
  public String render(String prefix, String devices) {
    StringBuilder conf = new StringBuilder("# slurm.conf (add tpu to GresTypes)\n");
    StringBuilder gres = new StringBuilder("# gres.conf\n");
    StringBuilder topology = new StringBuilder("# topology.conf (TopologyPlugin=topology/block)\n");
    StringBuilder labels = new StringBuilder("# Kubernetes node labels (kubectl label node ...)\n");
    int host = 0;
    int block = 0;
    int smallest = Integer.MAX_VALUE;
    for (Slices s : slices) {
      TpuSlices.Accelerator acc = tpu.accelerator(s.type()).orElseThrow();
      int hosts = s.shape().hosts(acc.chipsPerHost());
      int chips = s.shape().chipsOnEachHost(acc.chipsPerHost());
      for (int i = 0; i < s.count(); i++) {
        String nodes = prefix + "[" + host + "-" + (host + hosts - 1) + "]";
        if (hosts == 1) {
          nodes = prefix + host;
        }
        conf.append("NodeName=")
            .append(nodes)
            .append(" Gres=")
            .append(tpu.gres())
            .append(':')
            .append(chips)
            .append(" Features=")
            .append(acc.featureOf(s.shape().topology()))
            .append(" # with the hosts' CPUs, RealMemory and addresses\n");
        gres.append("NodeName=")
            .append(nodes)
            .append(" Name=")
            .append(tpu.gres())
            .append(" File=")
            .append(devices)
            .append('\n');
        topology.append("BlockName=slice-").append(block).append(" Nodes=").append(nodes);
        topology.append('\n');
        for (int h = host; h < host + hosts; h++) {
          labels
              .append("kubectl label node ")
              .append(prefix)
              .append(h)
              .append(' ')
              .append(tpu.acceleratorLabel())
              .append('=')
              .append(s.type())
              .append(' ')
              .append(tpu.topologyLabel())
              .append('=')
              .append(s.shape().topology())
              .append(" cloud.google.com/gke-nodepool=slice-")
              .append(block)
              .append('\n');
        }
        smallest = Math.min(smallest, hosts);
        host += hosts;
        block++;
      }
    }
    topology
        .append("# the base block is the smallest slice; Slurm 24.11 refuses a segment larger than")
        .append(" it (26.05 places it)\nBlockSizes=")
        .append(smallest)
        .append('\n');
    return conf.append('\n')
        .append(gres)
        .append('\n')
        .append(topology)
        .append('\n')
        .append(labels)
        .toString();
  }
}
