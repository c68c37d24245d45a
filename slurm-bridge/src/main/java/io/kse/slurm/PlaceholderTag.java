package io.kse.slurm;

import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Who a placeholder job stands for, written into the job's comment so that the whole mapping can be
 * rebuilt from Slurm alone after a restart: {@code kse:v1 cluster=<id> pod=<namespace>/<name>
 * uid=<uid>}, and for a multi-node group {@code … group=<id> size=<n>}, the pod being the member
 * that led the submission. The cluster is the Kubernetes cluster whose extender submitted it, so
 * that several clusters can share one Slurm; tags written before it existed have none. Kubernetes
 * names and UIDs never contain spaces, so the format needs no escaping.
 *
 * @param group the group's id within the namespace, for a multi-node group (see {@link #key()})
 * @param size the group's member count; 1 for a pod of its own
 * @param cluster the submitting Kubernetes cluster's identity; empty in tags of the older form
 */
public record PlaceholderTag(
    String namespace,
    String name,
    String uid,
    Optional<String> group,
    int size,
    Optional<String> cluster) {
  private static final String PREFIX = "kse:v1 ";
  private static final Pattern FORMAT =
      Pattern.compile(
          "kse:v1 (?:cluster=([a-z0-9-]{1,63}) )?pod=([a-z0-9.-]+)/([a-z0-9.-]+)"
              + " uid=([A-Za-z0-9-]+)(?: group=([a-z0-9./-]+) size=([0-9]{1,4}))?");
  private static final Pattern GROUP_ID = Pattern.compile("[a-z0-9./-]{1,200}");
  private static final Pattern CLUSTER_ID = Pattern.compile("[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?");

  /**
   * Comments already parsed: the state cache asks for every job's tag each time it re-indexes (each
   * hint and each pass that saw a change), and the regex was a third of a warm extender's CPU in a
   * 200-pod burst with 1,600 placeholders cached. Only comments of our form are kept.
   */
  private static final java.util.concurrent.ConcurrentHashMap<String, Optional<PlaceholderTag>>
      PARSED = new java.util.concurrent.ConcurrentHashMap<>();

  static final int PARSED_KEPT = 20_000;

  /** The prefix of a group's placement key; a pod's own key is its UID, which never has it. */
  public static final String GROUP_KEY_PREFIX = "group:";

  public PlaceholderTag {
    require("namespace", namespace);
    require("name", name);
    require("uid", uid);
    if (group.isPresent() && !GROUP_ID.matcher(group.get()).matches()) {
      throw new InvalidSubmission(
          "placeholder group id must be 1-200 of a-z 0-9 . / -, got '" + group.get() + "'");
    }
    if (size < 1 || size > 9999 || group.isEmpty() && size != 1) {
      throw new InvalidSubmission("placeholder group size out of range: " + size);
    }
    if (cluster.isPresent() && !CLUSTER_ID.matcher(cluster.get()).matches()) {
      throw new InvalidSubmission(
          "cluster identity must be a DNS label (a-z 0-9 -, up to 63), got '"
              + cluster.get()
              + "'");
    }
  }

  /** A pod of its own. */
  public PlaceholderTag(String namespace, String name, String uid) {
    this(namespace, name, uid, Optional.empty(), 1, Optional.empty());
  }

  /**
   * The placeholder of one placement: of a group of {@code size} members when {@code group} names
   * one (submitted for its member {@code name}), else of the pod alone. The extender's submissions
   * and a policy replay's make their tags here.
   */
  public static PlaceholderTag of(
      String namespace, String name, String uid, Optional<String> group, int size) {
    return group
        .map(g -> group(namespace, name, uid, g, size))
        .orElseGet(() -> new PlaceholderTag(namespace, name, uid));
  }

  /** The placeholder of a group of {@code size} members, submitted for member {@code name}. */
  public static PlaceholderTag group(
      String namespace, String name, String uid, String group, int size) {
    return new PlaceholderTag(namespace, name, uid, Optional.of(group), size, Optional.empty());
  }

  /** The same tag, naming the Kubernetes cluster that submits it. */
  public PlaceholderTag inCluster(String clusterId) {
    return new PlaceholderTag(namespace, name, uid, group, size, Optional.of(clusterId));
  }

  /** Whether a DNS label: what a cluster identity must be. */
  public static boolean validClusterId(String id) {
    return id != null && CLUSTER_ID.matcher(id).matches();
  }

  /**
   * Whether the extender of cluster {@code clusterId} may act on this placeholder from Slurm's side
   * alone (cancel it when no pod of its own stands for it): only when the tag names that cluster. A
   * tag of the older form names none; it is ours only when a pod of ours stands for it.
   */
  public boolean submittedBy(String clusterId) {
    return cluster.map(clusterId::equals).orElse(false);
  }

  /** Whether another cluster's extender submitted it (older tags name no cluster: not foreign). */
  public boolean foreignTo(String clusterId) {
    return cluster.isPresent() && !cluster.get().equals(clusterId);
  }

  /**
   * What the placeholder is kept under: the pod's UID, or {@code group:<namespace>/<id>} for a
   * group (whose members may be recreated with new UIDs while the job lives on).
   */
  public String key() {
    return group.map(g -> groupKey(namespace, g)).orElse(uid);
  }

  /** The placement key of group {@code id} in {@code namespace}. */
  public static String groupKey(String namespace, String id) {
    return GROUP_KEY_PREFIX + namespace + "/" + id;
  }

  public String toComment() {
    return PREFIX
        + cluster.map(c -> "cluster=" + c + " ").orElse("")
        + "pod="
        + namespace
        + "/"
        + name
        + " uid="
        + uid
        + group.map(g -> " group=" + g + " size=" + size).orElse("");
  }

  /** A job name that is readable in squeue and unique per pod (or group). */
  public String jobName() {
    return "kse-" + namespace + "-" + group.map(g -> g.replace('/', '-')).orElse(name);
  }

  /** Parses a job comment; empty for jobs that are not ours. */
  public static Optional<PlaceholderTag> fromComment(String comment) {
    if (comment == null || !comment.startsWith(PREFIX)) {
      return Optional.empty();
    }
    Optional<PlaceholderTag> known = PARSED.get(comment);
    if (known != null) {
      return known;
    }
    Optional<PlaceholderTag> tag = parse(comment);
    if (PARSED.size() >= PARSED_KEPT) {
      PARSED.clear(); // past a cache's worth of our jobs: start over rather than grow
    }
    PARSED.put(comment, tag);
    return tag;
  }

  private static Optional<PlaceholderTag> parse(String comment) {
    Matcher m = FORMAT.matcher(comment.trim());
    if (!m.matches()) {
      return Optional.empty();
    }
    try {
      return Optional.of(
          new PlaceholderTag(
              m.group(2),
              m.group(3),
              m.group(4),
              Optional.ofNullable(m.group(5)),
              m.group(6) == null ? 1 : Integer.parseInt(m.group(6)),
              Optional.ofNullable(m.group(1))));
    } catch (InvalidSubmission e) {
      return Optional.empty(); // a comment of ours that someone edited: not ours to act on
    }
  }

  private static void require(String field, String value) {
    if (value == null || value.isBlank() || value.chars().anyMatch(Character::isWhitespace)) {
      throw new InvalidSubmission(
          "placeholder " + field + " must be non-empty without spaces, got '" + value + "'");
    }
  }
}
