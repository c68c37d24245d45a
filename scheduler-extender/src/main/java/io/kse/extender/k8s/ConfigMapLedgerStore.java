package io.kse.extender.k8s;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.kse.extender.log.Untrusted;
import io.kse.policy.PreemptionLedger.Charge;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The charges as JSON in one ConfigMap beside the writer Lease ({@code <lease>-preemptions}),
 * written by every replica, each write conditional on the version it read (optimistic concurrency).
 * An entry that cannot be read is skipped and said, never fatal: a budget is a safety limit, not
 * state whose loss stops placements.
 */
public final class ConfigMapLedgerStore implements LedgerStore {
  private static final Logger LOG = LoggerFactory.getLogger(ConfigMapLedgerStore.class);
  private static final ObjectMapper JSON = new ObjectMapper();
  static final String KEY = "charges.json";

  private final KubernetesClient kube;
  private final String namespace;
  private final String name;

  public ConfigMapLedgerStore(KubernetesClient kube, String namespace, String name) {
    this.kube = kube;
    this.namespace = namespace;
    this.name = name;
  }

  @Override
  public Saved load() {
    ConfigMap cm = kube.configMaps().inNamespace(namespace).withName(name).get();
    if (cm == null) {
      return new Saved(List.of(), Optional.empty());
    }
    String text = cm.getData() == null ? null : cm.getData().get(KEY);
    return new Saved(
        text == null ? List.of() : parse(text, namespace + "/" + name),
        Optional.of(cm.getMetadata().getResourceVersion()));
  }

  @Override
  public boolean save(List<Charge> charges, Optional<String> version) {
    ConfigMap cm =
        new ConfigMapBuilder()
            .withNewMetadata()
            .withName(name)
            .withNamespace(namespace)
            .withResourceVersion(version.orElse(null))
            .withLabels(Map.of("app.kubernetes.io/name", "kube-slurm-extender"))
            .endMetadata()
            .withData(Map.of(KEY, render(charges)))
            .build();
    try {
      var target = kube.configMaps().inNamespace(namespace).resource(cm);
      if (version.isPresent()) {
        target.update(); // 409 when another replica wrote since our read
      } else {
        target.create(); // 409 when another replica created it since our read
      }
      return true;
    } catch (KubernetesClientException e) {
      if (e.getCode() == 409) {
        return false;
      }
      throw e;
    }
  }

  static String render(List<Charge> charges) {
    ArrayNode out = JSON.createArrayNode();
    for (Charge c : charges) {
      out.addObject()
          .put("tier", c.tier())
          .put("gpus", c.gpus())
          .put("nodes", c.nodes())
          .put("at", c.at().toString())
          .put("victimJob", c.victimJob())
          .put("victimRun", c.victimRun());
    }
    try {
      return JSON.writerWithDefaultPrettyPrinter().writeValueAsString(out);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static List<Charge> parse(String text, String where) {
    List<Charge> out = new ArrayList<>();
    JsonNode all;
    try {
      all = JSON.readTree(text);
    } catch (IOException e) {
      LOG.warn(
          "preemption_ledger_unreadable configMap={} error=\"{}\"",
          where,
          Untrusted.text(e.getMessage()));
      return out;
    }
    if (all == null || !all.isArray()) {
      LOG.warn("preemption_ledger_unreadable configMap={} error=\"not a JSON array\"", where);
      return out;
    }
    for (JsonNode n : all) {
      try {
        String tier = n.path("tier").asText("");
        if (tier.isEmpty() || !n.path("gpus").canConvertToLong() || n.path("gpus").asLong() < 0) {
          throw new IllegalArgumentException("tier and gpus are required");
        }
        out.add(
            new Charge(
                tier,
                n.path("gpus").asLong(),
                Math.max(0, n.path("nodes").asLong()),
                Instant.parse(n.path("at").asText()),
                Math.max(0, n.path("victimJob").asLong()),
                Math.max(0, n.path("victimRun").asInt())));
      } catch (RuntimeException e) {
        LOG.warn(
            "preemption_ledger_entry_skipped configMap={} entry=\"{}\" error=\"{}\"",
            where,
            Untrusted.text(n.toString()),
            Untrusted.text(String.valueOf(e.getMessage())));
      }
    }
    return out;
  }
}
