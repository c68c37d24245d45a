package io.kse.e2e;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.kse.slurm.PlaceholderTag;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Supplier;

/**
 * The soak's invariants, held against both sides' ground truth — the Kubernetes API and Slurm's own
 * {@code squeue} — never against the extender's state. Each check yields findings; a finding that
 * outlives its invariant's bound, counted from the end of the latest disruption the schedule caused
 * (an outage the extender cannot see through), is a violation. A finding that clears records how
 * long the system took to converge.
 */
final class SoakChecker {
  static final String SCHEDULER = "slurm-inference";
  static final String GROUP = "kse.io/group";
  static final String TIER_LABEL = "kse-test/tier";
  static final String CONDITION = "kse.io/SlurmAllocated";

  /** The invariants and how long each may be broken after a change (the convergence bound). */
  enum Invariant {
    /**
     * A bound, running pod of ours has a RUNNING placeholder whose allocation holds its node. 30 s:
     * an eviction a PodDisruptionBudget refuses is overridden after 20 s (KSE_PDB_OVERRIDE_MS).
     */
    BOUND_POD_HAS_ITS_JOB(Duration.ofSeconds(30)),
    /** A whole-node (serving, device-plugin) pod shares its node with no other running job. */
    WHOLE_NODE_NOT_SHARED(Duration.ofSeconds(30)),
    /**
     * A GPU in a ResourceClaim we allocated is one Slurm gave the pod's placeholder, and no other
     * running job holds it. 2 s: however the placeholder ended, its node stays COMPLETING until the
     * pod is gone (the hold, kse-node-epilog), so no other job runs there meanwhile; the checker's
     * own reads are seconds apart. An external placeholder has no Epilog to hold with: there the
     * bound of an eviction, 30 s ({@link #HOLDLESS_GPU_BOUND}).
     */
    GPU_HAS_ONE_OWNER(Duration.ofSeconds(2)),
    /**
     * Issue 46: the shares our claims consume on one GPU never exceed the shards Slurm gives a GPU
     * (a share pod is owned as long as it stops, like a whole one: 2 s, as GPU_HAS_ONE_OWNER).
     */
    GPU_SHARES_WITHIN_GPU(Duration.ofSeconds(2)),
    /** Two members of one group never on one node. */
    GROUP_MEMBERS_APART(Duration.ofSeconds(5)),
    /** No live placeholder whose pods are all gone (an orphan). */
    NO_ORPHAN_PLACEHOLDER(Duration.ofSeconds(30)),
    /** Never two live placeholders for one placement. */
    ONE_PLACEHOLDER_PER_PLACEMENT(Duration.ofSeconds(5)),
    /** After the schedule ends and the system quiets: every waiting pod says why. */
    WAITING_POD_SAYS_WHY(Duration.ZERO),
    /**
     * At the end: every job Slurm preempted for a placeholder of ours (slurmctld.log, squeue) is
     * charged to a tier's budget, once — whether the placeholder then took one of its nodes or ran
     * elsewhere (issue 60: inferred) — and nothing else is charged.
     */
    PREEMPTIONS_CHARGED_ONCE(Duration.ZERO);

    final Duration bound;

    Invariant(Duration bound) {
      this.bound = bound;
    }
  }

  /** Something that does not hold now, and what shows it. */
  record Finding(Invariant invariant, String key, String evidence) {
    String id() {
      return invariant + " " + key;
    }
  }

  /**
   * What a ResourceClaim's allocation gives the pod it is reserved for: whole GPUs by index, and
   * shares of GPUs (issue 46) by index with the shares consumed.
   */
  record ClaimedGpus(
      String podUid, String claim, List<Integer> indices, Map<Integer, Long> shares) {
    /** Whole GPUs only. */
    ClaimedGpus(String podUid, String claim, List<Integer> indices) {
      this(podUid, claim, indices, Map.of());
    }
  }

  /**
   * The extender charged job {@code victim} to a budget: {@code by} a pod's PreemptedSlurmJob Event
   * ({@code event <pod>}), or {@code ledger} in the saved preemption ledger.
   */
  record Charge(long victim, String by) {}

  /** A finding that outlived its bound. */
  record Violation(Finding finding, Instant firstSeen, Instant at, List<String> recentActions) {}

  private final Set<String> namespaces;
  private final Supplier<List<String>> recentActions;
  private final Map<String, Instant> open = new LinkedHashMap<>();
  private final Map<String, Finding> openFindings = new HashMap<>();
  private final Set<String> reported = new HashSet<>();
  private final List<Violation> violations = new ArrayList<>();
  private final Map<Invariant, List<Long>> convergedMs = new TreeMap<>();
  private Instant quietSince = Instant.EPOCH;
  private int disruptions;
  private int ticks;
  private int slurmUnreadable;
  private long boundPodsChecked;
  private long placeholdersChecked;
  private long claimsChecked;
  private long shareClaimsChecked;
  private final JobRuns runs = new JobRuns();
  private final Set<Long> placeholderIds = new HashSet<>();
  private final Set<Charge> charges = new HashSet<>();
  private final Set<Long> requeuedByHand = new HashSet<>();
  private final List<NodeDown> nodesSetDown = new ArrayList<>();
  private String chargedForScheduleLosses = "none";
  private int preemptionsTaken;
  private int preemptionsElsewhere;
  private int preemptionsUnseen;

  /** GPU_HAS_ONE_OWNER's bound where nothing holds a placeholder's node once it ends. */
  static final Duration HOLDLESS_GPU_BOUND = Duration.ofSeconds(30);

  private final boolean nodesHeld;

  /** The shards each GPU has in Slurm (issue 46); 0 on a stack without shards. */
  private final int shardsPerGpu;

  SoakChecker(Set<String> namespaces, Supplier<List<String>> recentActions) {
    this(namespaces, recentActions, true, 0);
  }

  /**
   * @param nodesHeld Slurm's node Epilog holds an ended placeholder's node until its pod is gone
   *     (batch placeholders); false with external placeholders, which run no Epilog
   * @param shardsPerGpu the shards each GPU has in Slurm; 0 without shards
   */
  SoakChecker(
      Set<String> namespaces,
      Supplier<List<String>> recentActions,
      boolean nodesHeld,
      int shardsPerGpu) {
    this.namespaces = namespaces;
    this.recentActions = recentActions;
    this.nodesHeld = nodesHeld;
    this.shardsPerGpu = shardsPerGpu;
  }

  /** How long a finding of this invariant may stand. */
  Duration bound(Invariant inv) {
    boolean gpus = inv == Invariant.GPU_HAS_ONE_OWNER || inv == Invariant.GPU_SHARES_WITHIN_GPU;
    return gpus && !nodesHeld ? HOLDLESS_GPU_BOUND : inv.bound;
  }

  /** The schedule began something the extender cannot see through (an outage it caused). */
  synchronized void disruptionBegins() {
    disruptions++;
  }

  synchronized void disruptionEnds(Instant now) {
    disruptions = Math.max(0, disruptions - 1);
    if (disruptions == 0) {
      quietSince = now;
    }
  }

  /** One check of both sides; Slurm empty when squeue could not be read (the tick is skipped). */
  synchronized void tick(
      Instant now, List<Pod> pods, List<ClaimedGpus> claims, Optional<List<SlurmTruth.Job>> slurm) {
    ticks++;
    if (slurm.isEmpty()) {
      slurmUnreadable++;
      return;
    }
    runs.observe(now, slurm.get());
    slurm.get().stream()
        .filter(j -> j.tag().filter(t -> namespaces.contains(t.namespace())).isPresent())
        .forEach(j -> placeholderIds.add(j.id()));
    List<Finding> found = findings(pods, slurm.get(), claims, namespaces, shardsPerGpu);
    claimsChecked += claims.size();
    shareClaimsChecked += claims.stream().filter(c -> !c.shares().isEmpty()).count();
    boundPodsChecked +=
        pods.stream().filter(p -> ours(p, namespaces) && p.getSpec().getNodeName() != null).count();
    placeholdersChecked +=
        slurm.get().stream()
            .filter(j -> j.tag().filter(t -> namespaces.contains(t.namespace())).isPresent())
            .count();
    Map<String, Finding> byId = new LinkedHashMap<>();
    found.forEach(f -> byId.put(f.id(), f));
    for (var it = open.entrySet().iterator(); it.hasNext(); ) {
      var e = it.next();
      if (!byId.containsKey(e.getKey())) {
        Finding gone = openFindings.remove(e.getKey());
        convergedMs
            .computeIfAbsent(gone.invariant(), k -> new ArrayList<>())
            .add(Duration.between(e.getValue(), now).toMillis());
        it.remove();
      }
    }
    for (Finding f : byId.values()) {
      Instant first = open.computeIfAbsent(f.id(), k -> now);
      openFindings.put(f.id(), f);
      Instant from = first.isAfter(quietSince) ? first : quietSince;
      if (disruptions == 0
          && Duration.between(from, now).compareTo(bound(f.invariant())) > 0
          && reported.add(f.id())) {
        violations.add(new Violation(f, first, now, recentActions.get()));
      }
    }
  }

  /** Whether every finding has cleared (the quiet phase waits for this). */
  synchronized boolean settled() {
    return open.isEmpty();
  }

  /** The last check, once quiet: what is still open is a violation, as is a silent waiting pod. */
  synchronized void finalCheck(Instant now, List<Pod> pods) {
    for (var e : open.entrySet()) {
      if (reported.add(e.getKey())) {
        violations.add(
            new Violation(openFindings.get(e.getKey()), e.getValue(), now, recentActions.get()));
      }
    }
    for (Finding f : silentWaitingPods(pods, namespaces)) {
      violations.add(new Violation(f, now, now, recentActions.get()));
    }
  }

  /**
   * The schedule requeued job {@code id} with {@code scontrol requeue}: if a placeholder then takes
   * its node, the extender cannot tell that from a preemption (docs/runbook.md), so a charge for it
   * is counted apart, not judged.
   */
  synchronized void requeuedByHand(long id) {
    requeuedByHand.add(id);
  }

  /** The schedule set {@code node} DOWN in Slurm at {@code at}. */
  record NodeDown(String node, Instant at) {}

  /**
   * The schedule set {@code node} DOWN: Slurm requeues the jobs running there, and a job that loses
   * its run that way as a placeholder takes the node is charged (docs/runbook.md, "What is
   * charged"), so such a charge is counted apart, not judged.
   */
  synchronized void nodeSetDown(String node, Instant at) {
    nodesSetDown.add(new NodeDown(node, at));
  }

  /**
   * A job last seen running this close to its node's DOWN lost its run to it: the checker looks
   * about once a second, and a check takes a while.
   */
  static final Duration NODE_DOWN_SLACK = Duration.ofSeconds(3);

  /**
   * The runs the schedule itself ended, each with how: requeued by hand, its node set DOWN, or
   * preempted by Slurm for another job than ours (a critical job). The extender cannot tell these
   * from a preemption for a placeholder that starts on the job's node at that moment, and charges
   * them (docs/runbook.md): a charge for one of them is counted, not judged.
   */
  private Map<Long, String> lostToTheSchedule(List<SlurmPreemptions.Preemption> slurm) {
    Map<Long, String> out = new TreeMap<>();
    requeuedByHand.forEach(id -> out.put(id, "requeued by hand"));
    for (NodeDown d : nodesSetDown) {
      runs.endedOn(d.node(), d.at().minus(NODE_DOWN_SLACK), d.at().plus(NODE_DOWN_SLACK))
          .forEach(id -> out.putIfAbsent(id, "its node set DOWN"));
    }
    slurm.stream()
        .filter(p -> !placeholderIds.contains(p.preemptor()))
        .forEach(p -> out.putIfAbsent(p.victim(), "preempted for another job"));
    return out;
  }

  /** Charges seen so far (Events expire after an hour, old ledger entries are pruned: add up). */
  synchronized void charged(java.util.Collection<Charge> seen) {
    charges.addAll(seen);
  }

  /**
   * The ledger against Slurm's own record of what it preempted, once, at the end: each job Slurm
   * preempted for a placeholder of ours whose run then shared one of its nodes is charged, by one
   * pod; a charged job is one Slurm preempted for a placeholder of ours. A preemption whose two
   * runs the checker never saw (Slurm unreadable then, or a run shorter than a check) is counted,
   * not judged.
   */
  synchronized void ledgerCheck(Instant now, List<SlurmPreemptions.Preemption> slurm) {
    Map<Long, String> lostToSchedule = lostToTheSchedule(slurm);
    for (Finding f :
        ledgerFindings(slurm, runs, placeholderIds, charges, lostToSchedule.keySet())) {
      violations.add(new Violation(f, now, now, recentActions.get()));
    }
    Set<Long> preemptedForUs = new HashSet<>();
    slurm.stream()
        .filter(p -> placeholderIds.contains(p.preemptor()))
        .forEach(p -> preemptedForUs.add(p.victim()));
    Map<String, Long> how = new TreeMap<>();
    charges.stream()
        .map(Charge::victim)
        .distinct()
        .filter(v -> !preemptedForUs.contains(v) && lostToSchedule.containsKey(v))
        .forEach(v -> how.merge(lostToSchedule.get(v), 1L, Long::sum));
    chargedForScheduleLosses = how.isEmpty() ? "none" : how.toString();
    for (SlurmPreemptions.Preemption p : slurm) {
      if (!placeholderIds.contains(p.preemptor())) {
        continue;
      }
      if (runs.before(p.victim(), p.at()).isEmpty()
          || runs.after(p.preemptor(), p.at()).isEmpty()) {
        preemptionsUnseen++;
      } else if (tookItsNode(p, runs).isPresent()) {
        preemptionsTaken++;
      } else {
        preemptionsElsewhere++;
      }
    }
  }

  /** What the ledger check found in Slurm's record of preemptions for our placeholders. */
  synchronized String preemptionsJudged() {
    return String.format(
        "%d whose node the placeholder then took (each must be charged), %d whose placeholder ran"
            + " elsewhere (Slurm preempts for a pending job, then may place it on another node;"
            + " each must be charged too, inferred: docs/preemption.md),"
            + " %d whose runs the checker did not see; charged though the schedule ended their"
            + " run, not judged (a placeholder took the node as it happened: indistinguishable from"
            + " a preemption, docs/runbook.md): %s",
        preemptionsTaken, preemptionsElsewhere, preemptionsUnseen, chargedForScheduleLosses);
  }

  static List<Finding> ledgerFindings(
      List<SlurmPreemptions.Preemption> slurm,
      JobRuns runs,
      Set<Long> placeholders,
      Set<Charge> charges,
      Set<Long> lostToSchedule) {
    List<Finding> out = new ArrayList<>();
    Map<Long, Set<String>> chargedBy = new TreeMap<>();
    charges.forEach(c -> chargedBy.computeIfAbsent(c.victim(), k -> new TreeSet<>()).add(c.by()));
    Set<Long> preemptedForUs = new HashSet<>();
    Map<Long, List<String>> taken = new TreeMap<>();
    for (SlurmPreemptions.Preemption p : slurm) {
      if (!placeholders.contains(p.preemptor())) {
        continue; // another job's preemption (a critical job taking a placeholder's node)
      }
      preemptedForUs.add(p.victim());
      Optional<String> ran =
          tookItsNode(p, runs)
              .map(nodes -> "on its node(s) " + nodes)
              // issue 60: its placeholder ran elsewhere, none of ours took its nodes: still told
              // and charged (inferred, docs/preemption.md)
              .or(
                  () ->
                      runs.before(p.victim(), p.at()).isPresent()
                              && runs.after(p.preemptor(), p.at()).isPresent()
                          ? Optional.of("elsewhere (to be charged, inferred)")
                          : Optional.empty());
      ran.ifPresent(
          where ->
              taken
                  .computeIfAbsent(p.victim(), k -> new ArrayList<>())
                  .add(
                      "for placeholder "
                          + p.preemptor()
                          + " at "
                          + p.at()
                          + ", which then ran "
                          + where));
    }
    taken.forEach(
        (victim, how) -> {
          Set<String> by = chargedBy.getOrDefault(victim, Set.of());
          long runsCharged = count(by, "ledger run ");
          if (by.isEmpty()) {
            out.add(
                new Finding(
                    Invariant.PREEMPTIONS_CHARGED_ONCE,
                    "victim " + victim,
                    "Slurm preempted job " + victim + " " + how.get(0) + ": never charged"));
          } else if (runsCharged > 0 && runsCharged < how.size()) {
            out.add(
                new Finding(
                    Invariant.PREEMPTIONS_CHARGED_ONCE,
                    "victim " + victim,
                    "Slurm preempted job "
                        + victim
                        + " "
                        + how.size()
                        + " times ("
                        + String.join("; ", how)
                        + "), the ledger charged "
                        + by));
          }
        });
    chargedBy.forEach(
        (victim, by) -> {
          if (!preemptedForUs.contains(victim) && !lostToSchedule.contains(victim)) {
            out.add(
                new Finding(
                    Invariant.PREEMPTIONS_CHARGED_ONCE,
                    "victim " + victim,
                    "job "
                        + victim
                        + " charged ("
                        + by
                        + "), yet Slurm never preempted it for a placeholder of ours"));
          }
          // each run a job loses is one charge, told to one pod: a job preempted three times
          // may be told to three pods, not to more pods than the runs the ledger charged
          long pods = count(by, "event ");
          long runsCharged = count(by, "ledger run ");
          if (pods > Math.max(1, runsCharged)) {
            out.add(
                new Finding(
                    Invariant.PREEMPTIONS_CHARGED_ONCE,
                    "victim " + victim,
                    "job "
                        + victim
                        + " charged to "
                        + pods
                        + " pods for "
                        + runsCharged
                        + " run(s): "
                        + by));
          }
        });
    return out;
  }

  /** How many of a victim's charges came from one kind of source ("event ", "ledger run "). */
  private static long count(Set<String> chargedBy, String source) {
    return chargedBy.stream().filter(b -> b.startsWith(source)).count();
  }

  /**
   * The victim's nodes the preemptor then ran on; empty when they share none, or when the checker
   * missed either run.
   */
  private static Optional<List<String>> tookItsNode(SlurmPreemptions.Preemption p, JobRuns runs) {
    Optional<JobRuns.Run> lost = runs.before(p.victim(), p.at());
    Optional<JobRuns.Run> took = runs.after(p.preemptor(), p.at());
    if (lost.isEmpty() || took.isEmpty()) {
      return Optional.empty();
    }
    List<String> shared = new ArrayList<>(took.get().nodes());
    shared.retainAll(lost.get().nodes());
    return shared.isEmpty() ? Optional.empty() : Optional.of(shared);
  }

  synchronized List<Violation> violations() {
    return List.copyOf(violations);
  }

  synchronized Map<Invariant, List<Long>> convergedMs() {
    Map<Invariant, List<Long>> copy = new TreeMap<>();
    convergedMs.forEach((k, v) -> copy.put(k, List.copyOf(v)));
    return copy;
  }

  synchronized int ticks() {
    return ticks;
  }

  synchronized int slurmUnreadable() {
    return slurmUnreadable;
  }

  /** Bound pods of ours, summed over the checks: that the checker had something to hold. */
  synchronized long boundPodsChecked() {
    return boundPodsChecked;
  }

  /** Allocated GPU claims reserved for a pod, summed over the checks. */
  synchronized long claimsChecked() {
    return claimsChecked;
  }

  int shardsPerGpu() {
    return shardsPerGpu;
  }

  /** Allocated claims of shares of a GPU (issue 46) among them. */
  synchronized long shareClaimsChecked() {
    return shareClaimsChecked;
  }

  /** Placeholders of ours in Slurm, summed over the checks. */
  synchronized long placeholdersChecked() {
    return placeholdersChecked;
  }

  // ---- the invariants, as pure functions of both sides --------------------------------------

  static List<Finding> findings(
      List<Pod> pods, List<SlurmTruth.Job> jobs, List<ClaimedGpus> claims, Set<String> namespaces) {
    return findings(pods, jobs, claims, namespaces, 0);
  }

  /** The same, on a stack whose GPUs have {@code shardsPerGpu} Slurm shards each (0: none). */
  static List<Finding> findings(
      List<Pod> pods,
      List<SlurmTruth.Job> jobs,
      List<ClaimedGpus> claims,
      Set<String> namespaces,
      int shardsPerGpu) {
    List<Finding> out = new ArrayList<>();
    out.addAll(wholeBesideShards(jobs));
    if (shardsPerGpu > 0) {
      out.addAll(sharesWithinGpus(pods, claims, namespaces, shardsPerGpu));
    }
    List<Pod> ours = pods.stream().filter(p -> ours(p, namespaces)).toList();
    List<SlurmTruth.Job> placeholders =
        jobs.stream()
            .filter(j -> j.tag().filter(t -> namespaces.contains(t.namespace())).isPresent())
            .toList();
    Map<String, List<String>> nodesOfGroup = new HashMap<>();
    for (Pod p : ours) {
      String node = p.getSpec().getNodeName();
      if (node == null || finished(p)) {
        continue;
      }
      // a pod being deleted still holds its GPUs until its containers stop (the soak's DRA pods
      // take SoakSchedule.SLOW_STOP): no other job may run on them meanwhile (the hold)
      gpuOwners(p, node, jobs, claims).ifPresent(out::add);
      if (!running(p)) {
        continue;
      }
      Optional<SlurmTruth.Job> job =
          placeholders.stream()
              .filter(j -> j.running() && j.nodes().contains(node) && stands(j.tag().get(), p))
              .findFirst();
      if (job.isEmpty()) {
        out.add(
            new Finding(
                Invariant.BOUND_POD_HAS_ITS_JOB,
                name(p),
                name(p)
                    + " runs on "
                    + node
                    + "; its placeholders: "
                    + placeholders.stream().filter(j -> stands(j.tag().get(), p)).toList()));
      }
      if ("serving".equals(label(p, TIER_LABEL)) && !claimsGpus(p)) {
        List<SlurmTruth.Job> others =
            jobs.stream()
                .filter(j -> j.running() && j.nodes().contains(node))
                .filter(j -> j.tag().filter(t -> stands(t, p)).isEmpty())
                .toList();
        if (!others.isEmpty()) {
          out.add(
              new Finding(
                  Invariant.WHOLE_NODE_NOT_SHARED,
                  name(p),
                  name(p) + " has " + node + " to itself, yet there run " + others));
        }
      }
      group(p)
          .ifPresent(
              g ->
                  nodesOfGroup
                      .computeIfAbsent(
                          p.getMetadata().getNamespace() + "/" + g, k -> new ArrayList<>())
                      .add(node));
    }
    nodesOfGroup.forEach(
        (g, nodes) -> {
          if (new HashSet<>(nodes).size() < nodes.size()) {
            out.add(
                new Finding(
                    Invariant.GROUP_MEMBERS_APART, g, "members of " + g + " on nodes " + nodes));
          }
        });
    Map<String, List<SlurmTruth.Job>> byPlacement = new HashMap<>();
    for (SlurmTruth.Job j : placeholders) {
      if (!j.live()) {
        continue;
      }
      PlaceholderTag t = j.tag().get();
      byPlacement.computeIfAbsent(t.key(), k -> new ArrayList<>()).add(j);
      boolean hasPod = ours.stream().anyMatch(p -> stands(t, p));
      if (!hasPod) {
        out.add(
            new Finding(
                Invariant.NO_ORPHAN_PLACEHOLDER,
                Long.toString(j.id()),
                "job " + j + " stands for no pod that exists"));
      }
    }
    byPlacement.forEach(
        (key, js) -> {
          if (js.size() > 1) {
            out.add(
                new Finding(
                    Invariant.ONE_PLACEHOLDER_PER_PLACEMENT, key, key + " has live jobs " + js));
          }
        });
    return out;
  }

  /**
   * The GPUs the pod's claims hold on its node, whole or in shares: each one its placeholder's, by
   * Slurm's own indices (whole GPUs among its GPUs, shares on a GPU its shards are on), and no
   * other running job's — none holding it whole, none holding shards of a GPU the pod has whole.
   * Jobs for which Slurm names no index are not judged.
   */
  private static Optional<Finding> gpuOwners(
      Pod p, String node, List<SlurmTruth.Job> jobs, List<ClaimedGpus> claims) {
    List<ClaimedGpus> mine =
        claims.stream().filter(c -> c.podUid().equals(p.getMetadata().getUid())).toList();
    Set<Integer> whole = new TreeSet<>();
    Set<Integer> shared = new TreeSet<>();
    mine.forEach(
        c -> {
          whole.addAll(c.indices());
          shared.addAll(c.shares().keySet());
        });
    if (whole.isEmpty() && shared.isEmpty()) {
      return Optional.empty();
    }
    Set<Integer> any = new TreeSet<>(whole);
    any.addAll(shared);
    List<String> wrong = new ArrayList<>();
    for (SlurmTruth.Job j : jobs) {
      List<Integer> gpus = j.gpusOn(node);
      Set<Integer> shardGpus = j.shardsOn(node).keySet();
      if (!j.running() || !j.nodes().contains(node) || (gpus.isEmpty() && shardGpus.isEmpty())) {
        continue;
      }
      boolean own = j.tag().filter(t -> stands(t, p)).isPresent();
      if (own && !(gpus.containsAll(whole) && shardGpus.containsAll(shared))) {
        wrong.add(
            "its placeholder " + j.id() + " holds GPUs " + gpus + ", shards on GPUs " + shardGpus);
      } else if (!own && !java.util.Collections.disjoint(gpus, any)) {
        wrong.add("job " + j.id() + " (" + j.user() + ") holds GPUs " + gpus);
      } else if (!own && !java.util.Collections.disjoint(shardGpus, whole)) {
        wrong.add("job " + j.id() + " (" + j.user() + ") holds shards of GPUs " + shardGpus);
      }
    }
    return wrong.isEmpty()
        ? Optional.empty()
        : Optional.of(
            new Finding(
                Invariant.GPU_HAS_ONE_OWNER,
                name(p),
                name(p)
                    + " on "
                    + node
                    + " claims GPUs "
                    + whole
                    + " and shares of GPUs "
                    + shared
                    + " ("
                    + mine.stream().map(ClaimedGpus::claim).toList()
                    + "), yet "
                    + String.join("; ", wrong)
                    + "; the pod: annotated job "
                    + annotation(p, "kse.io/slurm-job")
                    + (p.getMetadata().getDeletionTimestamp() == null
                        ? ", not deleted"
                        : ", deleted at " + p.getMetadata().getDeletionTimestamp())
                    + "; its placeholders in Slurm: "
                    + jobs.stream()
                        .filter(j -> j.tag().filter(t -> stands(t, p)).isPresent())
                        .map(j -> j.id() + " " + j.state() + " on " + j.nodes())
                        .toList()));
  }

  /**
   * Slurm's side of issue 46: a GPU one running job holds whole while another holds shards of it.
   * Slurm promises never to; the checker holds it to that.
   */
  static List<Finding> wholeBesideShards(List<SlurmTruth.Job> jobs) {
    Map<String, Long> wholeOwner = new TreeMap<>();
    Map<String, List<Long>> shardOwners = new TreeMap<>();
    for (SlurmTruth.Job j : jobs) {
      if (!j.running()) {
        continue;
      }
      for (String node : j.nodes()) {
        j.gpusOn(node).forEach(g -> wholeOwner.put(node + " GPU " + g, j.id()));
        j.shardsOn(node)
            .keySet()
            .forEach(
                g ->
                    shardOwners
                        .computeIfAbsent(node + " GPU " + g, k -> new ArrayList<>())
                        .add(j.id()));
      }
    }
    List<Finding> out = new ArrayList<>();
    shardOwners.forEach(
        (gpu, owners) -> {
          Long whole = wholeOwner.get(gpu);
          if (whole != null && owners.stream().anyMatch(o -> !o.equals(whole))) {
            out.add(
                new Finding(
                    Invariant.GPU_HAS_ONE_OWNER,
                    gpu,
                    gpu
                        + " is job "
                        + whole
                        + "'s whole while jobs "
                        + owners
                        + " hold shards of it"));
          }
        });
    return out;
  }

  /**
   * The shares our bound pods' claims consume on each GPU (issue 46), pods still stopping included:
   * never more than the shards Slurm gives a GPU.
   */
  static List<Finding> sharesWithinGpus(
      List<Pod> pods, List<ClaimedGpus> claims, Set<String> namespaces, int shardsPerGpu) {
    Map<String, String> nodeOf = new HashMap<>();
    pods.stream()
        .filter(p -> ours(p, namespaces) && p.getSpec().getNodeName() != null && !finished(p))
        .forEach(p -> nodeOf.put(p.getMetadata().getUid(), p.getSpec().getNodeName()));
    Map<String, Long> consumed = new TreeMap<>();
    Map<String, List<String>> by = new TreeMap<>();
    for (ClaimedGpus c : claims) {
      String node = nodeOf.get(c.podUid());
      if (node == null) {
        continue;
      }
      c.shares()
          .forEach(
              (gpu, n) -> {
                String key = node + " GPU " + gpu;
                consumed.merge(key, n, Long::sum);
                by.computeIfAbsent(key, k -> new ArrayList<>()).add(c.claim() + "=" + n);
              });
    }
    List<Finding> out = new ArrayList<>();
    consumed.forEach(
        (gpu, n) -> {
          if (n > shardsPerGpu) {
            out.add(
                new Finding(
                    Invariant.GPU_SHARES_WITHIN_GPU,
                    gpu,
                    gpu + " gives " + n + " shares (" + by.get(gpu) + "), it has " + shardsPerGpu));
          }
        });
    return out;
  }

  /**
   * The GPU indices each allocated claim gives the pods it is reserved for, read from the devices
   * the DRA driver published ({@code gpu-N} is index N; see {@link DraGpus}).
   */
  static List<ClaimedGpus> claimedGpus(List<ResourceClaim> claims) {
    List<ClaimedGpus> out = new ArrayList<>();
    for (ResourceClaim c : claims) {
      var status = c.getStatus();
      if (status == null
          || status.getAllocation() == null
          || status.getAllocation().getDevices() == null
          || status.getReservedFor() == null) {
        continue;
      }
      List<Integer> indices = new ArrayList<>();
      Map<Integer, Long> shares = new TreeMap<>();
      for (var r : status.getAllocation().getDevices().getResults()) {
        Optional<Integer> index =
            DraGpus.DRIVER.equals(r.getDriver()) ? DraGpus.index(r.getDevice()) : Optional.empty();
        if (index.isEmpty()) {
          continue;
        }
        var share =
            r.getConsumedCapacity() == null ? null : r.getConsumedCapacity().get(DraGpus.SHARES);
        if (r.getShareID() != null && share != null) {
          shares.merge(index.get(), share.getNumericalAmount().longValue(), Long::sum);
        } else {
          indices.add(index.get());
        }
      }
      indices.sort(null);
      for (var r : status.getReservedFor()) {
        if ("pods".equals(r.getResource()) && !(indices.isEmpty() && shares.isEmpty())) {
          out.add(new ClaimedGpus(r.getUid(), c.getMetadata().getName(), indices, shares));
        }
      }
    }
    return out;
  }

  private static boolean claimsGpus(Pod p) {
    return p.getSpec().getResourceClaims() != null && !p.getSpec().getResourceClaims().isEmpty();
  }

  /** Pods of ours that wait for a node without a {@code kse.io/SlurmAllocated=False} reason. */
  static List<Finding> silentWaitingPods(List<Pod> pods, Set<String> namespaces) {
    List<Finding> out = new ArrayList<>();
    for (Pod p : pods) {
      if (!ours(p, namespaces)
          || p.getSpec().getNodeName() != null
          || p.getMetadata().getDeletionTimestamp() != null) {
        continue;
      }
      List<PodCondition> conditions =
          p.getStatus() == null || p.getStatus().getConditions() == null
              ? List.of()
              : p.getStatus().getConditions();
      boolean says =
          conditions.stream()
              .anyMatch(
                  c ->
                      CONDITION.equals(c.getType())
                          && "False".equals(c.getStatus())
                          && c.getReason() != null
                          && !c.getReason().isBlank());
      if (!says) {
        out.add(
            new Finding(
                Invariant.WAITING_POD_SAYS_WHY,
                name(p),
                name(p) + " waits with conditions " + conditions));
      }
    }
    return out;
  }

  /**
   * Whether the placeholder tagged {@code t} stands for pod {@code p} (its own, or its group's).
   */
  static boolean stands(PlaceholderTag t, Pod p) {
    if (!t.namespace().equals(p.getMetadata().getNamespace())) {
      return false;
    }
    if (t.group().isPresent()) {
      return group(p).map(g -> t.group().get().equals("kse/" + g)).orElse(false);
    }
    return t.uid().equals(p.getMetadata().getUid());
  }

  private static boolean ours(Pod p, Set<String> namespaces) {
    return SCHEDULER.equals(p.getSpec().getSchedulerName())
        && namespaces.contains(p.getMetadata().getNamespace());
  }

  /** Bound and meant to run: not being deleted, not finished. */
  private static boolean running(Pod p) {
    return p.getMetadata().getDeletionTimestamp() == null && !finished(p);
  }

  /** Its containers ended: it holds nothing, deleted or not. */
  private static boolean finished(Pod p) {
    String phase = p.getStatus() == null ? null : p.getStatus().getPhase();
    return "Succeeded".equals(phase) || "Failed".equals(phase);
  }

  private static Optional<String> group(Pod p) {
    Map<String, String> a = p.getMetadata().getAnnotations();
    return Optional.ofNullable(a == null ? null : a.get(GROUP));
  }

  private static String annotation(Pod p, String key) {
    Map<String, String> a = p.getMetadata().getAnnotations();
    return a == null ? null : a.get(key);
  }

  private static String label(Pod p, String key) {
    Map<String, String> l = p.getMetadata().getLabels();
    return l == null ? null : l.get(key);
  }

  private static String name(Pod p) {
    return p.getMetadata().getNamespace() + "/" + p.getMetadata().getName();
  }
}
