package io.kse.policy;

import com.fasterxml.jackson.databind.JsonNode;
import io.kse.policy.model.ClusterSpec;
import io.kse.policy.model.GpuShares;
import io.kse.policy.model.TpuSlices;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.regex.Pattern;

/**
 * The {@code cluster} section of a policy: what the Slurm cluster offers (preemption mode, GPU and
 * other GRES, NVLink domains, topology requests, TPU slices, shared GPUs). Problems go to the
 * {@link PolicyReader} the whole file is read with, so they are listed with every other.
 */
final class ClusterParser {
  private static final Pattern FEATURE = Pattern.compile("[A-Za-z0-9][-A-Za-z0-9_.]{0,62}");

  private final PolicyReader r;

  ClusterParser(PolicyReader reader) {
    this.r = reader;
  }

  ClusterSpec cluster(JsonNode c) {
    String p = "cluster";
    if (c.isMissingNode()) {
      r.problem(p, "required (preemptMode, gpuGres, topology)");
      return new ClusterSpec(
          ClusterSpec.PreemptMode.PARTITION,
          "gpu",
          Optional.empty(),
          List.of(),
          0,
          List.of(ClusterSpec.NVIDIA_CLIQUE_LABEL),
          false,
          false,
          Map.of(),
          List.of(),
          0,
          Optional.empty(),
          Optional.empty(),
          Map.of());
    }
    r.keys(
        c,
        p,
        "preemptMode",
        "gpuGres",
        "gpuType",
        "nvlinkDomainFeatures",
        "nvlinkDomainNodes",
        "nvlinkDomainTopologyKeys",
        "switches",
        "blocks",
        "extendedResources",
        "kubernetesOnlyResources",
        "gpusPerNode",
        "tpu",
        "gpuShares",
        "migProfiles");
    ClusterSpec.PreemptMode mode =
        r.text(c, p, "preemptMode")
            .map(m -> r.enumValue(p + ".preemptMode", m, ClusterSpec.PreemptMode.class))
            .orElseGet(
                () -> {
                  r.problem(p + ".preemptMode", "required: partition or qos");
                  return ClusterSpec.PreemptMode.PARTITION;
                });
    return new ClusterSpec(
        mode == null ? ClusterSpec.PreemptMode.PARTITION : mode,
        r.text(c, p, "gpuGres").orElse("gpu"),
        r.text(c, p, "gpuType"),
        r.strings(c, p, "nvlinkDomainFeatures"),
        domainNodes(c, p),
        c.has("nvlinkDomainTopologyKeys")
            ? r.strings(c, p, "nvlinkDomainTopologyKeys")
            : List.of(ClusterSpec.NVIDIA_CLIQUE_LABEL),
        r.bool(c, p, "switches", false),
        r.bool(c, p, "blocks", false),
        r.stringMap(c, p, "extendedResources"),
        r.strings(c, p, "kubernetesOnlyResources"),
        gpusPerNode(c, p),
        c.has("tpu")
            ? Optional.of(tpu(c.get("tpu"), p + ".tpu", r.bool(c, p, "blocks", false)))
            : Optional.empty(),
        c.has("gpuShares")
            ? Optional.of(gpuShares(c.get("gpuShares"), p + ".gpuShares"))
            : Optional.empty(),
        migProfiles(c, p));
  }

  /** {@code cluster.migProfiles}: each MIG profile a claim may ask → its Slurm GRES type. */
  Map<String, String> migProfiles(JsonNode c, String p) {
    Map<String, String> out = r.stringMap(c, p, "migProfiles");
    out.forEach(
        (profile, type) -> {
          if (!MIG_NAME.matcher(profile).matches()) {
            r.problem(
                p + ".migProfiles",
                "\"" + profile + "\" is not a MIG profile name (e.g. 1g.10gb, 3g.40gb)");
          }
          if (!MIG_NAME.matcher(type).matches()) {
            r.problem(
                p + ".migProfiles." + profile,
                "\"" + type + "\" is not a Slurm GRES type (e.g. h100_1g.10gb)");
          }
        });
    return out;
  }

  /** A MIG profile or a Slurm GRES type: letters, digits, '.', '_', '-', '+'. */
  private static final java.util.regex.Pattern MIG_NAME =
      java.util.regex.Pattern.compile("[A-Za-z0-9][A-Za-z0-9._+-]{0,63}");

  /** {@code cluster.gpuShares}: Slurm's shard GRES and the shares each GPU has. */
  GpuShares gpuShares(JsonNode g, String p) {
    r.keys(g, p, "gres", "perGpu", "capacity");
    int per = r.integer(g, p, "perGpu").orElse(0);
    if (per < 1 || per > 1024) {
      r.problem(p + ".perGpu", "required: the shards (and DRA shares) each GPU has, 1..1024");
    }
    return new GpuShares(
        r.text(g, p, "gres").orElse("shard"), per, r.text(g, p, "capacity").orElse("shares"));
  }

  /** {@code cluster.tpu}: the label and GRES names (GKE's by default) and the accelerator types. */
  TpuSlices tpu(JsonNode t, String p, boolean blocks) {
    r.keys(t, p, "resource", "gres", "acceleratorLabel", "topologyLabel", "accelerators");
    Map<String, TpuSlices.Accelerator> types = new LinkedHashMap<>();
    JsonNode a = t.path("accelerators");
    if (!a.isObject() || a.isEmpty()) {
      r.problem(p + ".accelerators", "required: the accelerator types, e.g. tpu-v5p-slice: {...}");
    } else {
      a.fields()
          .forEachRemaining(
              f -> {
                String q = p + ".accelerators." + f.getKey();
                JsonNode v = f.getValue();
                r.keys(v, q, "chipsPerHost", "feature", "topologies");
                int chips = r.integer(v, q, "chipsPerHost").orElse(0);
                if (chips < 1 || chips > 64) {
                  r.problem(q + ".chipsPerHost", "required: the chips on each host, 1..64");
                }
                String feature = r.text(v, q, "feature").orElse("");
                if (!FEATURE.matcher(feature).matches()) {
                  r.problem(
                      q + ".feature", "required: a Slurm node feature, got \"" + feature + "\"");
                }
                List<String> topologies = r.strings(v, q, "topologies");
                if (topologies.isEmpty()) {
                  r.problem(q + ".topologies", "required: the slice topologies the cluster has");
                }
                for (String topo : topologies) {
                  try {
                    if (SliceShape.parse(topo).hosts(Math.max(1, chips)) > 1 && !blocks) {
                      r.problem(
                          q + ".topologies",
                          topo
                              + " spans several hosts, placed as one topology/block segment:"
                              + " set cluster.blocks: true (Slurm 23.11+ with topology/block)");
                    }
                  } catch (IllegalArgumentException e) {
                    r.problem(q + ".topologies", e.getMessage());
                  }
                }
                types.put(f.getKey(), new TpuSlices.Accelerator(chips, feature, topologies));
              });
    }
    return new TpuSlices(
        r.text(t, p, "resource").orElse(TpuSlices.GKE_RESOURCE),
        r.text(t, p, "gres").orElse("tpu"),
        r.text(t, p, "acceleratorLabel").orElse(TpuSlices.GKE_ACCELERATOR_LABEL),
        r.text(t, p, "topologyLabel").orElse(TpuSlices.GKE_TOPOLOGY_LABEL),
        types);
  }

  int gpusPerNode(JsonNode c, String p) {
    OptionalInt n = r.integer(c, p, "gpusPerNode");
    if (n.isPresent() && (n.getAsInt() < 1 || n.getAsInt() > 1024)) {
      r.problem(p + ".gpusPerNode", "must be 1..1024");
      return 0;
    }
    return n.orElse(0);
  }

  int domainNodes(JsonNode c, String p) {
    OptionalInt n = r.integer(c, p, "nvlinkDomainNodes");
    if (n.isPresent() && (n.getAsInt() < 1 || n.getAsInt() > WellKnown.MAX_NODES)) {
      r.problem(p + ".nvlinkDomainNodes", "must be 1.." + WellKnown.MAX_NODES);
      return 0;
    }
    return n.orElse(0);
  }
}
