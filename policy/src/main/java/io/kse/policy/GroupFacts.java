package io.kse.policy;

import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * What the policy may know about a multi-node group: pods placed together by one placeholder job,
 * one member per node.
 *
 * @param id the group's id within its namespace (e.g. {@code lws/llm/0}, {@code kse/trainer})
 * @param source what made it a group, in the user's words (e.g. {@code LeaderWorkerSet llm})
 * @param size how many members (nodes) the group has
 * @param members its members that exist, in index order, the leader first (a LeaderWorkerSet with
 *     exclusive-topology creates its workers only once the leader is bound: then only the leader)
 * @param topologyKey a Kubernetes topology key the group's controller asks all members to share
 *     (LeaderWorkerSet exclusive-topology, PodGroup topology constraint), if any
 * @param exclusive whether the group must have its topology domain to itself among such groups
 *     (LeaderWorkerSet exclusive-topology: its leaders repel each other across domains)
 * @param domainsTaken NVLink-domain features other exclusive groups' jobs hold now
 */
public record GroupFacts(
    String id,
    String source,
    int size,
    List<PodFacts> members,
    Optional<String> topologyKey,
    boolean exclusive,
    Set<String> domainsTaken) {
  public GroupFacts {
    members = List.copyOf(members);
    domainsTaken = Set.copyOf(domainsTaken);
    if (members.isEmpty() || members.size() > size) {
      throw new IllegalArgumentException(
          "a group of " + size + " has 1.." + size + " members, not " + members.size());
    }
  }

  public PodFacts leader() {
    return members.get(0);
  }
}
