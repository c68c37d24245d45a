package io.kse.policy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * A group's facts from manifests, for {@code kse-policy explain}: a LeaderWorkerSet (its first
 * group: the leader from the leader template, else the worker template, then size-1 workers), or
 * several Pod manifests in index order. Nothing runs, so no domain is taken by another group.
 */
public final class GroupManifest {
  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

  /** The LeaderWorkerSet annotation asking for one topology domain per group. */
  private GroupManifest() {}

  /** Whether the manifest text is a LeaderWorkerSet. */
  public static boolean isLeaderWorkerSet(String text) {
    try {
      return "LeaderWorkerSet".equals(YAML.readTree(text).path("kind").asText());
    } catch (Exception e) {
      return false;
    }
  }

  /** The first group of a LeaderWorkerSet manifest. */
  public static GroupFacts leaderWorkerSet(String text) {
    JsonNode lws;
    try {
      lws = YAML.readTree(text);
    } catch (Exception e) {
      throw new IllegalArgumentException("not a YAML/JSON manifest: " + e.getMessage(), e);
    }
    JsonNode meta = lws.path("metadata");
    String name = meta.path("name").asText("");
    if (name.isEmpty()) {
      throw new IllegalArgumentException("the LeaderWorkerSet has no metadata.name");
    }
    JsonNode template = lws.path("spec").path("leaderWorkerTemplate");
    int size = template.path("size").asInt(1);
    if (size < 1 || size > WellKnown.MAX_NODES) {
      throw new IllegalArgumentException(
          "spec.leaderWorkerTemplate.size must be 1.." + WellKnown.MAX_NODES + ", got " + size);
    }
    JsonNode worker = template.path("workerTemplate");
    if (!worker.isObject()) {
      throw new IllegalArgumentException("spec.leaderWorkerTemplate.workerTemplate is missing");
    }
    JsonNode leader =
        template.path("leaderTemplate").isObject() ? template.path("leaderTemplate") : worker;
    String ns = meta.path("namespace").asText("default");
    List<PodFacts> members = new ArrayList<>();
    members.add(PodManifest.facts(pod(leader, ns, name + "-0")));
    for (int i = 1; i < size; i++) {
      members.add(PodManifest.facts(pod(worker, ns, name + "-0-" + i)));
    }
    Optional<String> key =
        Optional.ofNullable(meta.path("annotations").path(WellKnown.LWS_EXCLUSIVE).textValue());
    return new GroupFacts(
        "lws/" + name + "/0",
        "LeaderWorkerSet " + name + " group 0",
        size,
        members,
        key,
        key.isPresent(),
        Set.of());
  }

  /** Several pods, the leader first. */
  public static GroupFacts pods(List<PodFacts> members) {
    PodFacts leader = members.get(0);
    String id = leader.annotations().getOrDefault(WellKnown.GROUP, leader.name());
    return new GroupFacts(
        "kse/" + id,
        WellKnown.GROUP + "=" + id,
        members.size(),
        members,
        Optional.empty(),
        false,
        Set.of());
  }

  private static JsonNode pod(JsonNode template, String ns, String name) {
    ObjectNode pod = YAML.createObjectNode();
    pod.put("apiVersion", "v1").put("kind", "Pod");
    ObjectNode meta = pod.putObject("metadata");
    if (template.path("metadata").isObject()) {
      meta.setAll((ObjectNode) template.path("metadata"));
    }
    meta.put("name", name).put("namespace", ns);
    pod.set("spec", template.path("spec"));
    return pod;
  }
}
