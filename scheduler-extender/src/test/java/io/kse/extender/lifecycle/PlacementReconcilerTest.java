package io.kse.extender.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.Pod;
import io.kse.extender.k8s.EventReason;
import io.kse.extender.k8s.KubeNodes;
import io.kse.extender.k8s.PodActions;
import io.kse.extender.k8s.PodRef;
import io.kse.slurm.JobState;
import io.kse.slurm.JobSubmission;
import io.kse.slurm.PlaceholderTag;
import io.kse.slurm.SlurmJob;
import io.kse.slurm.testing.FakeSlurmClient;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * A pod of its own, every sequence the issues listed: submitted, woken, released, evicted,
 * preempted, adopted after a restart.
 */
class PlacementReconcilerTest extends ReconcilerFixture {

  @Test
  void submitsOnePlaceholderPerPodWhateverHowOftenAsked() {
    Pod p = pod("llm-0", "uid-1", Map.of());
    lifecycle.onPod(p);
    lifecycle.enqueue(PodRef.of(p));
    lifecycle.onPod(p);
    assertThat(slurm.submissions()).hasSize(1);
    JobSubmission s = slurm.submissions().get(0);
    assertThat(s.partition()).contains("inference");
    assertThat(s.gresPerNode()).contains("gpu:h100:4");
    assertThat(s.cpusPerNode()).isEqualTo(3);
    assertThat(s.memoryPerNodeMb()).isEqualTo(2048);
    assertThat(s.tag().uid()).isEqualTo("uid-1");
    assertThat(registry.get("uid-1")).get().isInstanceOf(PlaceholderState.Submitted.class);
    assertThat(actions)
        .anySatisfy(
            a ->
                assertThat(a)
                    .startsWith("event SlurmJobSubmitted: placeholder submitted as Slurm job"));
  }

  /**
   * CI: slurmrestd timed out on a submission that had reached slurmctld; the retry made a second
   * placeholder for the pod, and the first held a node until the pod was deleted. One placeholder
   * per placement: the one holding nodes is kept (the pod is woken for it), the other cancelled.
   */
  @Test
  void aSecondLivePlaceholderOfOnePodIsCancelledWhileThePodLives() {
    Pod p = pod("llm-0", "uid-1", Map.of());
    long first =
        slurm.submit(
            JobSubmission.builder(new PlaceholderTag("serving", "llm-0", "uid-1")).build());
    long second =
        slurm.submit(
            JobSubmission.builder(new PlaceholderTag("serving", "llm-0", "uid-1")).build());
    slurm.allocate(first, List.of("gpu-node-2"));
    cache.resyncSoon();
    cache.pollOnce();
    lifecycle.onPod(p);
    assertThat(slurm.job(second)).map(SlurmJob::state).contains(JobState.CANCELLED);
    assertThat(slurm.job(first)).map(SlurmJob::state).contains(JobState.RUNNING);
    assertThat(slurm.submissions()).as("nothing submitted again").hasSize(2);
    assertThat(actions).anyMatch(a -> a.startsWith("wake serving/llm-0"));
  }

  @Test
  void aPolicyRejectionIsRecordedAndExplained() {
    lifecycle.onPod(pod("llm-0", "uid-1", Map.of("kse.io/topology", "ring")));
    assertThat(slurm.submissions()).isEmpty();
    assertThat(registry.get("uid-1")).get().isInstanceOf(PlaceholderState.Rejected.class);
    assertThat(actions)
        .containsExactly(
            "event PlacementRejected: annotation kse.io/topology=ring is not a topology; use none or nvlink-domain",
            "condition false Rejected: annotation kse.io/topology=ring is not a topology; use none or nvlink-domain",
            "ungate serving/llm-0");
  }

  @Test
  void aSlurmOutageBacksOffAndIsRetriedLater() {
    slurm.failWith(FakeSlurmClient.outage());
    Pod p = pod("llm-0", "uid-1", Map.of());
    lifecycle.onPod(p);
    assertThat(registry.get("uid-1"))
        .get()
        .isInstanceOfSatisfying(
            PlaceholderState.SubmitFailed.class, f -> assertThat(f.attempts()).isEqualTo(1));
    slurm.failWith(null);
    lifecycle.onPod(p); // still inside the backoff
    assertThat(slurm.submissions()).isEmpty();
    assertThat(actions)
        .contains(
            "condition false SubmitFailed: the Slurm placeholder could not be submitted: Slurm unavailable");
    clock.advance(Duration.ofSeconds(2));
    lifecycle.onPod(p);
    assertThat(slurm.submissions()).hasSize(1);
  }

  @Test
  void aPlaceholderAllocatedWhileNoWriterWatchedIsAdoptedAndThePodWoken() {
    // found by e2e: after a crash, a pending pod whose job was already running was never woken
    writer.set(false);
    Pod p = pod("llm-0", "uid-1", Map.of());
    long id =
        slurm.submit(
            JobSubmission.builder(new PlaceholderTag("serving", "llm-0", "uid-1")).build());
    slurm.allocate(id, List.of("gpu-node-2"));
    cache.pollOnce();
    clearRecorded();
    writer.set(true);
    lifecycle.takeOver();
    cache.pollOnce(); // a new writer acts once it has listed Slurm's jobs
    assertThat(slurm.submissions()).as("adopted, not submitted again").hasSize(1);
    assertThat(registry.get("uid-1")).as("nothing in flight: Slurm's record is enough").isEmpty();
    assertThat(actions).contains("wake serving/llm-0 -> gpu-node-2");
  }

  @Test
  void aFailedSubmissionIsRetriedByHousekeepingOnceItsBackoffPassed() {
    slurm.failWith(FakeSlurmClient.outage());
    lifecycle.onPod(pod("llm-0", "uid-1", Map.of()));
    slurm.failWith(null);
    lifecycle.reconcileAll();
    assertThat(slurm.submissions()).as("inside the backoff").isEmpty();
    clock.advance(Duration.ofSeconds(3));
    lifecycle.reconcileAll();
    assertThat(slurm.submissions()).hasSize(1);
    assertThat(registry.get("uid-1")).get().isInstanceOf(PlaceholderState.Submitted.class);
  }

  @Test
  void wakesThePodWhenSlurmAllocatesAndCancelsTheJobWhenThePodGoes() {
    Pod p = pod("llm-0", "uid-1", Map.of());
    long id = submitted(p);
    cache.pollOnce();
    slurm.allocate(id, List.of("gpu-node-1"));
    cache.pollOnce();
    // the allocation is said before the wake: once woken, the pod may be bound before the worker
    // goes on, and an allocation held after the binding's Event would be said on its own
    assertThat(actions)
        .containsSubsequence(
            "event AllocatedBySlurm: Slurm job " + id + " allocated node gpu-node-1",
            "wake serving/llm-0 -> gpu-node-1");
    pods.remove("serving/llm-0"); // as the informer: gone from its store, then the delete event
    lifecycle.onPodDeleted(p);
    assertThat(slurm.job(id).map(SlurmJob::state)).contains(JobState.CANCELLED);
    cache.pollOnce(); // once the cache shows the job ended, nothing is remembered
    assertThat(registry.get("uid-1")).isEmpty();
  }

  @Test
  void aPodDeletedBeforeTheCacheSawItsPlaceholderStillCancelsIt() {
    // found by e2e: the delete came before the next poll, so the cache had no job for the pod
    Pod p = pod("llm-0", "uid-1", Map.of());
    long id = submitted(p);
    pods.remove("serving/llm-0");
    lifecycle.onPodDeleted(p);
    assertThat(slurm.job(id).map(SlurmJob::state)).contains(JobState.CANCELLED);
  }

  @Test
  void aPodDeletedWhileItsPlaceholderIsSubmittedCancelsIt() {
    Pod p = pod("llm-0", "uid-1", Map.of());
    slurm.duringSubmit(
        () -> {
          pods.remove("serving/llm-0");
          lifecycle.onPodDeleted(p); // nothing to cancel yet: the submit has not answered
        });
    lifecycle.onPod(p);
    assertThat(slurm.submissions()).hasSize(1);
    assertThat(slurm.jobsChangedSince(java.time.Instant.EPOCH).jobs())
        .singleElement()
        .satisfies(j -> assertThat(j.state()).isEqualTo(JobState.CANCELLED));
    cache.pollOnce();
    assertThat(registry.get("uid-1")).isEmpty();
  }

  /** {@code p}'s placeholder allocated on gpu-node-1 and seen, and {@code p} bound there. */
  private long boundOnGpuNode1(Pod p) {
    long id = submitted(p);
    slurm.allocate(id, List.of("gpu-node-1"));
    cache.pollOnce();
    p.getSpec().setNodeName("gpu-node-1");
    return id;
  }

  @Test
  void aBoundPodWhoseNodeFailedIsToldOfTheNode() {
    Pod p = pod("llm-0", "uid-1", Map.of());
    long id = boundOnGpuNode1(p);
    slurm.setNodeState("gpu-node-1", "down", Set.of("NOT_RESPONDING"));
    slurm.pend(id, "None"); // requeued for the node's failure: Slurm says no reason
    cache.pollOnce();
    assertThat(actions)
        .contains(
            "evict serving/llm-0: Slurm job "
                + id
                + " was requeued: gpu-node-1 is down-notresponding in Slurm");
  }

  @Test
  void evictsABoundPodWhosePlaceholderWasPreempted() {
    Pod p = pod("llm-0", "uid-1", Map.of());
    long id = boundOnGpuNode1(p);
    slurm.requeue(id);
    cache.pollOnce();
    assertThat(actions)
        .contains("evict serving/llm-0: Slurm job " + id + " was requeued (BeginTime)");
    assertThat(slurm.job(id).map(SlurmJob::state))
        .as("the requeued placeholder must not come back for a pod that is gone")
        .contains(JobState.CANCELLED);
  }

  @Test
  void aCopyOfAPlaceholdersCommentUnderAnotherSlurmUserIsIgnoredNeverCancelled() {
    Pod p = pod("llm-0", "uid-1", Map.of());
    long id = boundOnGpuNode1(p);
    String comment = slurm.job(id).orElseThrow().comment();
    // any Slurm user can read the comment (squeue -o %k) and submit a held job with a copy
    long impostor = slurm.addJobAs("mallory", comment);
    cache.pollOnce();
    lifecycle.reconcileAll();
    assertThat(cache.jobFor("uid-1").map(SlurmJob::id)).contains(id);
    assertThat(recorded(Recorded.Evict.class)).isEmpty();
    assertThat(slurm.job(impostor).map(SlurmJob::state))
        .as("not ours to cancel")
        .contains(JobState.PENDING);
    assertThat(cache.impostors()).isEqualTo(1);
    // the real placeholder ends: the pod goes, and the copy still is not taken for its job
    slurm.end(id, JobState.CANCELLED);
    cache.pollOnce();
    assertThat(actions).anyMatch(a -> a.startsWith("evict serving/llm-0: Slurm job " + id));
    assertThat(slurm.job(impostor).map(SlurmJob::state)).contains(JobState.PENDING);
  }

  @Test
  void resubmitsForAPendingPodWhosePlaceholderWasPreempted() {
    Pod p = pod("llm-0", "uid-1", Map.of());
    long id = submitted(p);
    slurm.allocate(id, List.of("gpu-node-1"));
    cache.pollOnce();
    slurm.end(id, JobState.PREEMPTED);
    cache.pollOnce();
    assertThat(slurm.submissions()).hasSize(2);
    assertThat(recorded(Recorded.Evict.class)).isEmpty();
  }

  @Test
  void cancelsAPlaceholderWhosePodNoLongerExists() {
    Pod p = pod("llm-0", "uid-1", Map.of());
    long id = submitted(p);
    cache.pollOnce();
    pods.clear();
    slurm.allocate(id, List.of("gpu-node-0"));
    cache.pollOnce();
    assertThat(slurm.job(id).map(SlurmJob::state)).contains(JobState.CANCELLED);
  }

  @Test
  void attributesASlurmPreemptionToThePodChargesTheBudgetAndCountsIt() {
    long training = requeueTrainingAndStartPlaceholder("gpu-node-1", "gpu-node-1");
    assertThat(actions)
        .anySatisfy(
            a ->
                assertThat(a)
                    .startsWith(
                        "event PreemptedSlurmJob: Slurm preempted job "
                            + training
                            + " (train-3, partition training, tier training"));
    assertThat(
            meters
                .get("kse.preemptions")
                .tag("tier", "inference")
                .tag("victim_tier", "training")
                .counter()
                .count())
        .isEqualTo(1.0);
    assertThat(meters.get("kse.pod.allocation").timer().count()).isEqualTo(1);
    // the woken pod's write, timed from its decision: waiting for a worker, then the write
    assertThat(meters.get("kse.wake.up").tag("stage", "queued").timer().count()).isEqualTo(1);
    assertThat(meters.get("kse.wake.up").tag("stage", "write").timer().count()).isEqualTo(1);
    assertThat(meters.get("kse.placeholders").tag("state", "Submitted").gauge().value())
        .isEqualTo(1.0);
  }

  @Test
  void aTrainingJobEndingOnAnotherNodeIsNotAPreemption() {
    requeueTrainingAndStartPlaceholder("gpu-node-0", "gpu-node-1");
    assertThat(events(EventReason.PREEMPTED)).isEmpty();
    assertThat(meters.find("kse.preemptions").counter()).isNull();
  }

  @Test
  void aReplicaThatIsNotTheWriterNeverActsAndTheNewWriterCatchesUp() {
    writer.set(false);
    Pod p = pod("llm-0", "uid-1", Map.of());
    lifecycle.onPod(p);
    lifecycle.enqueue(PodRef.of(p));
    assertThat(slurm.submissions()).isEmpty();
    writer.set(true);
    lifecycle.takeOver();
    cache.pollOnce(); // a new writer acts once it has listed Slurm's jobs
    assertThat(slurm.submissions()).hasSize(1);
  }

  @Test
  void aTerminalPodReleasesItsPlaceholder() {
    Pod p = pod("llm-0", "uid-1", Map.of());
    long id = submitted(p);
    cache.pollOnce();
    p.getStatus().setPhase("Succeeded");
    lifecycle.onPod(p);
    assertThat(slurm.job(id).map(SlurmJob::state)).contains(JobState.CANCELLED);
  }

  // ---- the sequences of the reconciler issue: each converges whatever was seen in between ----

  /** A pod bound where Slurm allocated its job; returns the job id. */
  long boundOn(Pod p, String node) {
    long id = submitted(p);
    slurm.allocate(id, List.of(node));
    cache.pollOnce();
    p.getSpec().setNodeName(node);
    lifecycle.onPod(p);
    clearRecorded();
    return id;
  }

  @Test
  void aBoundPodIsEvictedWhenItsJobEndsEvenIfOnlyCompletingWasSeenBefore() {
    // 1: a poll caught COMPLETING, the next CANCELLED: no single RUNNING -> ended change
    Pod p = pod("llm-0", "uid-1", Map.of());
    long id = boundOn(p, "gpu-node-1");
    slurm.end(id, JobState.COMPLETING);
    cache.pollOnce();
    assertThat(actions)
        .as("22.05 says COMPLETING alone: the pod is told the end all the same")
        .anyMatch(a -> a.startsWith("evict serving/llm-0: Slurm job " + id + " ended (CANCELLED)"));
    clearRecorded();
    slurm.end(id, JobState.CANCELLED);
    cache.pollOnce();
    clock.advance(Duration.ofSeconds(11)); // the pod is still there after the eviction: again
    lifecycle.reconcileAll();
    assertThat(actions).contains("evict serving/llm-0: Slurm job " + id + " ended (CANCELLED)");
  }

  @Test
  void aJobThatEndedWhileNoWriterWatchedIsNoticedByTheNextWriter() {
    // 2: restart or fail-over: a fresh reconciler knows nothing but what is true now
    Pod p = pod("llm-0", "uid-1", Map.of());
    long id = boundOn(p, "gpu-node-1");
    writer.set(false);
    slurm.end(id, JobState.TIMEOUT);
    cache.pollOnce();
    slurm.purge(id);
    cache.pollOnce();
    cache.pollOnce(); // gone from two full listings
    assertThat(recorded(Recorded.Evict.class)).isEmpty();
    writer.set(true);
    PlacementReconciler fresh = reconciler(new PlaceholderRegistry());
    fresh.takeOver();
    cache.pollOnce(); // a new writer acts once it has listed Slurm's jobs
    assertThat(actions).contains("evict serving/llm-0: no Slurm job holds gpu-node-1 for this pod");
  }

  @Test
  void anEvictionRefusedByADisruptionBudgetIsRetriedThenOverridden() {
    // 3: HTTP 429 was logged as evicted and never retried
    Pod p = pod("llm-0", "uid-1", Map.of());
    long id = boundOn(p, "gpu-node-1");
    evictAnswer.put("uid-1", PodActions.EvictResult.BLOCKED_BY_PDB);
    slurm.end(id, JobState.PREEMPTED);
    cache.pollOnce();
    assertThat(actions.stream().filter(a -> a.startsWith("evict"))).hasSize(1);
    assertThat(actions)
        .anyMatch(
            a ->
                a.startsWith(
                    "event EvictionBlocked: a PodDisruptionBudget refused the eviction (attempt 1)"));
    lifecycle.reconcileAll(); // inside the backoff: nothing
    assertThat(actions.stream().filter(a -> a.startsWith("evict"))).hasSize(1);
    clock.advance(Duration.ofSeconds(2));
    lifecycle.reconcileAll();
    assertThat(actions.stream().filter(a -> a.startsWith("evict"))).hasSize(2);
    assertThat(meters.get("kse.evictions").tag("result", "blocked_by_pdb").counter().count())
        .isEqualTo(2);
    assertThat(actions).doesNotContain("delete serving/llm-0");
    for (int i = 0; i < 10; i++) {
      clock.advance(Duration.ofSeconds(30));
      lifecycle.reconcileAll();
    }
    assertThat(actions).contains("delete serving/llm-0");
  }

  @Test
  void aPendingPodWhoseJobIsCancelledFromOutsideGetsANewOneAndIsTold() {
    // 4: an admin's scancel; the gated pod is never filtered, so only the reconciler can notice
    Pod p = pod("llm-0", "uid-1", Map.of());
    long id = submitted(p);
    cache.pollOnce();
    slurm.end(id, JobState.CANCELLED);
    cache.pollOnce();
    assertThat(slurm.submissions()).hasSize(2);
    assertThat(actions)
        .contains(
            "event SlurmJobEnded: Slurm job "
                + id
                + " ended (CANCELLED) before the pod was bound; submitting a new placeholder");
  }

  /**
   * Issue 28: a replica's cache follows the jobs it made, so a new writer must not act before it
   * has read slurmctld's whole job table: the previous writer's placeholder would be submitted
   * twice.
   */
  @Test
  void aNewWriterActsOnlyOnceItHasListedTheJobsThePreviousWriterMade() {
    cache.pollOnce();
    Pod p = pod("llm-0", "uid-1", Map.of());
    // the previous writer's placeholder for this pod, unknown to this replica's cache
    long theirs =
        slurm.submit(
            JobSubmission.builder(
                    new io.kse.slurm.PlaceholderTag("serving", "llm-0", "uid-1").inCluster(CLUSTER))
                .build());
    lifecycle.takeOver();
    lifecycle.onPod(p);
    assertThat(slurm.submissions()).as("nothing done before the listing").hasSize(1);
    cache.pollOnce(); // the listing: the pod's job is found, and every placement converged
    lifecycle.onPod(p);
    assertThat(slurm.submissions()).as("never a second placeholder").hasSize(1);
    assertThat(cache.jobFor("uid-1")).map(SlurmJob::id).contains(theirs);
  }

  /**
   * 26.05 CI: slurmrestd stopped just after a takeover, before the new writer's listing. The writer
   * may not submit until it has listed; a pod created meanwhile must still hear why it waits.
   */
  @Test
  void aPodWaitingOnANewWriterThatCannotReachSlurmIsToldWhy() {
    cache.pollOnce();
    lifecycle.takeOver();
    Pod early = pod("llm-0", "uid-0", Map.of());
    lifecycle.onPod(early); // before the failing pass: nothing to say yet
    slurm.failWith(FakeSlurmClient.outage());
    assertThatThrownBy(cache::pollOnce).isInstanceOf(io.kse.slurm.SlurmException.class);
    Pod p = pod("llm-1", "uid-1", Map.of());
    lifecycle.onPod(p);
    assertThat(slurm.submissions()).isEmpty();
    assertThat(actions).filteredOn(a -> a.contains("SlurmUnreachable")).hasSize(1);
    lifecycle.reconcileAll(); // the periodic pass: the pod that came first hears it too
    assertThat(actions).filteredOn(a -> a.contains("SlurmUnreachable")).hasSize(2);
    assertThat(actions)
        .anyMatch(
            a ->
                a.startsWith(
                    "condition false SlurmUnreachable: Slurm is unreachable (fake: slurmrestd is"
                        + " down)"));
    slurm.failWith(null);
    cache.pollOnce(); // the listing: every placement converged
    assertThat(slurm.submissions()).hasSize(2);
  }

  @Test
  void aJobAllocatedOnACordonedNodeIsReplaced() {
    // 5: the pod can never bind there; the job held its GPUs for as long as the drain lasted
    Pod p = pod("llm-0", "uid-1", Map.of());
    long id = submitted(p);
    nodes.put("gpu-node-1", new KubeNodes.KubeNode("gpu-node-1", true, Optional.empty()));
    slurm.allocate(id, List.of("gpu-node-1"));
    cache.pollOnce();
    assertThat(recorded(Recorded.Wake.class)).isEmpty();
    assertThat(actions)
        .anyMatch(
            a ->
                a.startsWith(
                    "event AllocatedNodeUnusable: Slurm job "
                        + id
                        + " was allocated a node the pod cannot go to now (gpu-node-1 is cordoned)"));
    assertThat(slurm.job(id).map(SlurmJob::state)).contains(JobState.CANCELLED);
    cache.pollOnce();
    assertThat(slurm.submissions()).as("a new placeholder").hasSize(2);
    assertThat(slurm.submissions().get(1).excludedNodes())
        .as("never on that node again")
        .containsExactly("gpu-node-1");
  }

  /**
   * slurmrestd 22.05 cannot exclude a node: Slurm allocated the cordoned node to each replacement
   * in turn, and the extender cancelled and resubmitted in a loop (four jobs a second, seen live).
   */
  @Test
  void onSlurm2205ReplacementsOfAJobOnACordonedNodeAreSpacedNotLooped() {
    slurm.speak(io.kse.slurm.ApiVersion.V0038);
    Pod p = pod("llm-0", "uid-1", Map.of());
    long first = submitted(p);
    nodes.put("gpu-node-1", new KubeNodes.KubeNode("gpu-node-1", true, Optional.empty()));
    slurm.allocate(first, List.of("gpu-node-1"));
    cache.pollOnce();
    cache.pollOnce();
    assertThat(slurm.submissions()).hasSize(2);
    cache.pollOnce(); // the cache follows the new job from its submission
    long second = cache.jobFor("uid-1").orElseThrow().id();
    assertThat(second).isNotEqualTo(first);
    slurm.allocate(second, List.of("gpu-node-1")); // Slurm chose it again
    cache.pollOnce();
    assertThat(slurm.job(second).map(SlurmJob::state))
        .as("held, not cancelled at once")
        .contains(JobState.RUNNING);
    assertThat(actions)
        .anyMatch(a -> a.contains("slurmrestd 22.05 cannot exclude a node from a job"));
    clock.advance(java.time.Duration.ofSeconds(3));
    lifecycle.reconcileAll();
    assertThat(slurm.job(second).map(SlurmJob::state)).contains(JobState.CANCELLED);
  }

  @Test
  void aPendingPodIsToldWhyItWaitsOnlyWhenTheReasonChanges() {
    // 7: with the scheduling gate kube-scheduler never calls filter, so the pod says it itself
    Pod p = pod("llm-0", "uid-1", Map.of());
    long id = submitted(p);
    slurm.pend(id, "Resources");
    cache.pollOnce();
    clock.advance(PENDING_QUIET.plusSeconds(5));
    lifecycle.reconcileAll();
    // issue 47: past the quiet period, but Slurm was last read before it ended: in a burst our
    // reads lag Slurm's starts, and the job may be running already — not told it waits
    assertThat(actions).noneMatch(a -> a.startsWith("condition"));
    assertThat(events(EventReason.WAITING)).isEmpty();
    cache.pollOnce(); // still pending, now read past the quiet period
    lifecycle.reconcileAll();
    lifecycle.reconcileAll();
    assertThat(actions.stream().filter(a -> a.startsWith("condition")))
        .containsExactly(
            "condition false SlurmPending: waiting for Slurm job " + id + " (Resources)");
    slurm.pend(id, "Priority");
    cache.pollOnce();
    slurm.allocate(id, List.of("gpu-node-0"));
    cache.pollOnce();
    assertThat(actions.stream().filter(a -> a.startsWith("condition")))
        .containsExactly(
            "condition false SlurmPending: waiting for Slurm job " + id + " (Resources)",
            "condition false SlurmPending: waiting for Slurm job " + id + " (Priority)");
    assertThat(actions).contains("wake serving/llm-0 -> gpu-node-0");
  }

  @Test
  void aPlaceholderPendingOnlyAMomentCostsThePodNoConditionAndNoEvent() {
    // issue 16: each pod of a burst got a SlurmPending condition and Event before slurmctld's next
    // pass started its placeholder a few hundred ms later: API server CPU the burst waited for
    Pod p = pod("llm-0", "uid-1", Map.of());
    long id = submitted(p);
    slurm.pend(id, "None");
    cache.pollOnce();
    lifecycle.reconcileAll();
    slurm.pend(id, "Resources");
    cache.pollOnce();
    lifecycle.reconcileAll();
    slurm.allocate(id, List.of("gpu-node-1"));
    cache.pollOnce();
    lifecycle.reconcileAll();
    assertThat(events(EventReason.WAITING)).isEmpty();
    assertThat(recorded(Recorded.Condition.class)).noneMatch(c -> !c.allocated());
    assertThat(actions).contains("wake serving/llm-0 -> gpu-node-1");
  }

  @Test
  void aPodStuckTerminatingKeepsItsJob() {
    Pod p = pod("llm-0", "uid-1", Map.of());
    long id = boundOn(p, "gpu-node-1");
    p.getMetadata().setDeletionTimestamp(clock.instant().toString());
    lifecycle.onPod(p);
    lifecycle.reconcileAll();
    assertThat(slurm.job(id).map(SlurmJob::state)).contains(JobState.RUNNING);
    assertThat(events(EventReason.HELD_FOR_TERMINATING)).isEmpty();
    clock.advance(PlacementObserver.STUCK_TERMINATING.plusSeconds(1));
    lifecycle.reconcileAll();
    lifecycle.reconcileAll();
    assertThat(slurm.job(id).map(SlurmJob::state)).contains(JobState.RUNNING);
    assertThat(actions.stream().filter(a -> a.startsWith("event PlaceholderHeldForTerminatingPod")))
        .as("said once, never a silent release")
        .hasSize(1);
    assertThat(meters.get("kse.placeholders.held.for.terminating.pods").gauge().value())
        .isEqualTo(1.0);
    pods.remove("serving/llm-0");
    lifecycle.onPodDeleted(p);
    assertThat(slurm.job(id).map(SlurmJob::state)).contains(JobState.CANCELLED);
    assertThat(meters.get("kse.placeholders.held.for.terminating.pods").gauge().value())
        .isEqualTo(0.0);
  }

  /**
   * Slurm → pod: Slurm chooses a bound pod's placeholder for preemption. The pod is evicted, and
   * the job — which holds the node within its grace time — is cancelled only once the pod is gone.
   */
  @Test
  void aPreemptedPlaceholderIsReleasedOnlyAfterItsPodIsGone() {
    Pod p = pod("llm-0", "uid-1", Map.of());
    long id = boundOn(p, "gpu-node-1");
    slurm.preempt(id);
    cache.pollOnce();
    assertThat(actions)
        .anySatisfy(a -> assertThat(a).startsWith("event SlurmPreemptingPlaceholder: Slurm chose"))
        .anySatisfy(a -> assertThat(a).startsWith("evict serving/llm-0"));
    assertThat(slurm.job(id).map(SlurmJob::state)).contains(JobState.RUNNING);
    p.getMetadata().setDeletionTimestamp(clock.instant().plusSeconds(30).toString());
    lifecycle.onPod(p);
    lifecycle.reconcileAll();
    assertThat(slurm.job(id).map(SlurmJob::state))
        .as("the pod's containers may still run")
        .contains(JobState.RUNNING);
    pods.remove("serving/llm-0");
    lifecycle.onPodDeleted(p);
    assertThat(slurm.job(id).map(SlurmJob::state)).contains(JobState.CANCELLED);
  }

  @Test
  void aVictimRunningBeforeThisReplicaBecameTheWriterIsStillCharged() {
    // 6: a new writer never saw the victim RUNNING, so its preemption was not charged at all
    writer.set(false);
    long training = slurm.addForeignJob("train-3", JobState.RUNNING, List.of("gpu-node-1"));
    cache.pollOnce();
    writer.set(true);
    long id = submitted(pod("llm-0", "uid-1", Map.of()));
    cache.pollOnce();
    slurm.requeue(training);
    cache.endedElsewhere(training, List.of("gpu-node-1")); // Slurm's end hook
    slurm.allocate(id, List.of("gpu-node-1"));
    cache.pollOnce();
    assertThat(actions)
        .anySatisfy(
            a ->
                assertThat(a)
                    .startsWith("event PreemptedSlurmJob: Slurm preempted job " + training));
  }
}
