package io.kse.policy.drift;

import io.kse.policy.model.ClusterSpec;
import io.kse.policy.model.TpuSlices;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Where Kubernetes' idea of a node's topology disagrees with Slurm's, which is the truth: the
 * NVLink domain (our label {@value #NVLINK_LABEL} names the Slurm feature; a grouping key such as
 * {@code nvidia.com/gpu.clique} must group nodes as the domain features do) and the TPU slice (the
 * accelerator and topology labels must name the slice feature the Slurm node carries, with its
 * chips in the GRES). Only nodes both sides have are compared; every line names the node(s), what
 * each side says, and where it is said.
 */
public final class TopologyDrift {
  public static final String NVLINK_LABEL = "kse.io/nvlink-domain";

  private TopologyDrift() {}

  /** A node as Slurm has it: its active features and its GRES (e.g. {@code tpu:4}). */
  public record SlurmSide(String name, Set<String> features, String gres) {}

  /** A node as Kubernetes has it, under its Slurm node's name. */
  public record KubeSide(String name, Map<String, String> labels) {}

  /**
   * One difference: the Slurm nodes it is about, and what each side says of them.
   *
   * @param nodes the Slurm node names it names
   */
  public record Difference(List<String> nodes, String text) {
    public Difference {
      nodes = List.copyOf(nodes);
    }
  }

  /** Collects differences in the order found. */
  private static final class Found {
    final List<Difference> list = new ArrayList<>();

    void add(java.util.Collection<String> nodes, String text) {
      list.add(new Difference(new ArrayList<>(nodes), text));
    }
  }

  /** What each difference says. */
  public static List<String> differences(
      ClusterSpec cluster, List<SlurmSide> slurm, List<KubeSide> kube) {
    return differencesOf(cluster, slurm, kube).stream().map(Difference::text).toList();
  }

  /** The differences with the nodes each names (to tell each on its own nodes). */
  public static List<Difference> differencesOf(
      ClusterSpec cluster, List<SlurmSide> slurm, List<KubeSide> kube) {
    Map<String, SlurmSide> bySlurm = new TreeMap<>();
    slurm.forEach(s -> bySlurm.put(s.name(), s));
    List<KubeSide> both =
        kube.stream()
            .filter(k -> bySlurm.containsKey(k.name()))
            .sorted(java.util.Comparator.comparing(KubeSide::name))
            .toList();
    Found out = new Found();
    nvlinkLabel(cluster, bySlurm, both, out);
    for (String key : cluster.nvlinkDomainTopologyKeys()) {
      grouping(cluster, key, bySlurm, both, out);
    }
    cluster.tpu().ifPresent(t -> slices(t, bySlurm, both, out));
    return out.list;
  }

  private static Optional<String> domain(ClusterSpec cluster, SlurmSide s) {
    Set<String> d = new TreeSet<>(s.features());
    d.retainAll(cluster.nvlinkDomainFeatures());
    return d.size() == 1 ? Optional.of(d.iterator().next()) : Optional.empty();
  }

  private static void nvlinkLabel(
      ClusterSpec cluster, Map<String, SlurmSide> slurm, List<KubeSide> both, Found out) {
    boolean labelUsed = both.stream().anyMatch(k -> k.labels().containsKey(NVLINK_LABEL));
    for (KubeSide k : both) {
      String label = k.labels().get(NVLINK_LABEL);
      Optional<String> feature = domain(cluster, slurm.get(k.name()));
      if (label != null && !feature.equals(Optional.of(label))) {
        out.add(
            List.of(k.name()),
            "node "
                + k.name()
                + ": Kubernetes label "
                + NVLINK_LABEL
                + "="
                + label
                + ", Slurm's NVLink-domain feature "
                + feature.orElse("(none of cluster.nvlinkDomainFeatures)"));
      } else if (label == null && labelUsed && feature.isPresent()) {
        out.add(
            List.of(k.name()),
            "node "
                + k.name()
                + ": Slurm's NVLink-domain feature "
                + feature.get()
                + ", no Kubernetes label "
                + NVLINK_LABEL);
      }
    }
  }

  /** Nodes sharing a label value must share a Slurm domain, and the other way round. */
  private static void grouping(
      ClusterSpec cluster,
      String key,
      Map<String, SlurmSide> slurm,
      List<KubeSide> both,
      Found out) {
    Map<String, Set<String>> domainsByValue = new TreeMap<>();
    Map<String, Set<String>> valuesByDomain = new TreeMap<>();
    Map<String, Set<String>> nodesByValue = new TreeMap<>();
    Map<String, Set<String>> nodesByDomain = new TreeMap<>();
    for (KubeSide k : both) {
      String value = k.labels().get(key);
      Optional<String> d = domain(cluster, slurm.get(k.name()));
      if (value == null || d.isEmpty()) {
        continue;
      }
      domainsByValue.computeIfAbsent(value, x -> new TreeSet<>()).add(d.get());
      valuesByDomain.computeIfAbsent(d.get(), x -> new TreeSet<>()).add(value);
      nodesByValue.computeIfAbsent(value, x -> new TreeSet<>()).add(k.name());
      nodesByDomain.computeIfAbsent(d.get(), x -> new TreeSet<>()).add(k.name());
    }
    domainsByValue.forEach(
        (value, domains) -> {
          if (domains.size() > 1) {
            out.add(
                nodesByValue.get(value),
                "nodes "
                    + nodesByValue.get(value)
                    + " share "
                    + key
                    + "="
                    + value
                    + " in Kubernetes, but Slurm has them in NVLink domains "
                    + domains);
          }
        });
    valuesByDomain.forEach(
        (d, values) -> {
          if (values.size() > 1) {
            out.add(
                nodesByDomain.get(d),
                "nodes "
                    + nodesByDomain.get(d)
                    + " are Slurm's NVLink domain "
                    + d
                    + ", but Kubernetes labels them "
                    + key
                    + "="
                    + values);
          }
        });
  }

  private static void slices(
      TpuSlices tpu, Map<String, SlurmSide> slurm, List<KubeSide> both, Found out) {
    for (KubeSide k : both) {
      SlurmSide s = slurm.get(k.name());
      String type = k.labels().get(tpu.acceleratorLabel());
      String topology = k.labels().get(tpu.topologyLabel());
      Optional<String> slurmSlice = sliceFeature(tpu, s);
      if (type == null && topology == null) {
        slurmSlice.ifPresent(
            f ->
                out.add(
                    List.of(k.name()),
                    "node "
                        + k.name()
                        + ": Slurm's slice feature "
                        + f
                        + ", no Kubernetes labels "
                        + tpu.acceleratorLabel()
                        + " / "
                        + tpu.topologyLabel()));
        continue;
      }
      Optional<TpuSlices.Accelerator> acc = Optional.ofNullable(type).flatMap(tpu::accelerator);
      String says =
          tpu.acceleratorLabel() + "=" + type + " " + tpu.topologyLabel() + "=" + topology;
      if (acc.isEmpty() || topology == null) {
        out.add(
            List.of(k.name()),
            "node "
                + k.name()
                + ": Kubernetes labels "
                + says
                + " name no slice of the policy (cluster.tpu.accelerators)");
        continue;
      }
      String want = acc.get().featureOf(topology);
      if (!s.features().contains(want)) {
        out.add(
            List.of(k.name()),
            "node "
                + k.name()
                + ": Kubernetes labels "
                + says
                + " (Slurm feature "
                + want
                + "), Slurm's slice feature "
                + slurmSlice.orElse("(none)"));
      }
      String chips = tpu.gres() + ":";
      if (!s.gres().contains(chips)) {
        out.add(
            List.of(k.name()),
            "node "
                + k.name()
                + ": Kubernetes labels it a TPU host, Slurm's GRES "
                + (s.gres().isEmpty() ? "(none)" : s.gres())
                + " has no "
                + tpu.gres());
      }
    }
  }

  /**
   * The topology labels a node's Kubernetes side should carry, as Slurm says (for the opt-in label
   * sync): {@value #NVLINK_LABEL} from its NVLink-domain feature, and the TPU accelerator and
   * topology labels from its slice feature. A key mapped to empty is a label to remove (Slurm says
   * the node has none); keys not in the map are not derived and left alone.
   */
  public static Map<String, Optional<String>> derivedLabels(ClusterSpec cluster, SlurmSide s) {
    Map<String, Optional<String>> out = new TreeMap<>();
    if (!cluster.nvlinkDomainFeatures().isEmpty()) {
      out.put(NVLINK_LABEL, domain(cluster, s));
    }
    cluster
        .tpu()
        .ifPresent(
            tpu -> {
              Optional<String> type = Optional.empty();
              Optional<String> topology = Optional.empty();
              for (Map.Entry<String, TpuSlices.Accelerator> a :
                  new TreeMap<>(tpu.accelerators()).entrySet()) {
                for (String t : a.getValue().topologies()) {
                  if (s.features().contains(a.getValue().featureOf(t))) {
                    type = Optional.of(a.getKey());
                    topology = Optional.of(t);
                  }
                }
              }
              out.put(tpu.acceleratorLabel(), type);
              out.put(tpu.topologyLabel(), topology);
            });
    return out;
  }

  /** The Slurm feature naming a slice of one of the policy's TPU types, if the node has one. */
  private static Optional<String> sliceFeature(TpuSlices tpu, SlurmSide s) {
    for (TpuSlices.Accelerator a : tpu.accelerators().values()) {
      for (String t : a.topologies()) {
        if (s.features().contains(a.featureOf(t))) {
          return Optional.of(a.featureOf(t));
        }
      }
    }
    return Optional.empty();
  }
}
