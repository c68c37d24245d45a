package io.kse.policy;

/**
 * Pod annotation and label keys the policy reads: ours start with {@code kse.io/}; a group's also
 * come from LeaderWorkerSet's labels. The extender reads groups by these same keys.
 */
public final class WellKnown {
  public static final String PREFIX = "kse.io/";

  /** {@code none} or {@code nvlink-domain}: all the job's nodes in one NVLink domain. */
  public static final String TOPOLOGY = PREFIX + "topology";

  /**
   * {@code N} or {@code N@WAIT} (e.g. {@code 1@5m}): at most N leaf switches (Slurm --switches).
   */
  public static final String SWITCHES = PREFIX + "switches";

  /** {@code N}: topology/block segment size (Slurm --segment, 23.11+). */
  public static final String SEGMENT = PREFIX + "segment";

  /** Number of nodes the placeholder spans (default 1). */
  public static final String NODES = PREFIX + "nodes";

  /** Override keys (allowed per namespace by the policy's {@code overrides}). */
  public static final String TIER = PREFIX + "tier";

  public static final String PARTITION = PREFIX + "partition";
  public static final String QOS = PREFIX + "qos";
  public static final String ACCOUNT = PREFIX + "account";
  public static final String TIME_LIMIT = PREFIX + "time-limit";
  public static final String CONSTRAINT = PREFIX + "constraint";
  public static final String NICE = PREFIX + "nice";

  /** Any controller: the group's name, unique in the namespace. */
  public static final String GROUP = PREFIX + "group";

  /** Any controller: how many pods the group has. */
  public static final String GROUP_SIZE = PREFIX + "group-size";

  /** Any controller, optional: the member's index, 0 for the leader. */
  public static final String GROUP_INDEX = PREFIX + "group-index";

  public static final String LWS_NAME = "leaderworkerset.sigs.k8s.io/name";
  public static final String LWS_GROUP_INDEX = "leaderworkerset.sigs.k8s.io/group-index";
  public static final String LWS_WORKER_INDEX = "leaderworkerset.sigs.k8s.io/worker-index";
  public static final String LWS_SIZE = "leaderworkerset.sigs.k8s.io/size";
  public static final String LWS_EXCLUSIVE = "leaderworkerset.sigs.k8s.io/exclusive-topology";

  /** The most nodes one placeholder may span. */
  public static final int MAX_NODES = 1024;

  private WellKnown() {}
}
