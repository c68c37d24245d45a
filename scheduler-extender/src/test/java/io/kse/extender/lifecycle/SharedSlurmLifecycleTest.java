package io.kse.extender.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;

import io.kse.slurm.JobState;
import io.kse.slurm.JobSubmission;
import io.kse.slurm.PlaceholderTag;
import io.kse.slurm.SlurmJob;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Several Kubernetes clusters on one Slurm: each acts on its own placeholders only. */
class SharedSlurmLifecycleTest extends ReconcilerFixture {
  /** Several Kubernetes clusters on one Slurm: each acts on its own placeholders only. */
  long placeholderOf(PlaceholderTag tag) {
    long id = slurm.submit(JobSubmission.builder(tag).build());
    slurm.allocate(id, List.of("gpu-node-3"));
    cache.pollOnce();
    return id;
  }

  @Test
  void ourSubmissionsNameThisCluster() {
    lifecycle.onPod(pod("llm-0", "uid-1", Map.of()));
    assertThat(slurm.submissions().get(0).tag().cluster()).contains(CLUSTER);
  }

  @Test
  void anotherClustersPlaceholderIsNeverCancelledHereThoughNoPodOfOursStandsForIt() {
    // was: the orphan sweep cancelled any kse:v1 job whose pod this API server lacked
    long id =
        placeholderOf(new PlaceholderTag("serving", "llm-0", "their-uid").inCluster("staging"));
    lifecycle.reconcileAll();
    lifecycle.takeOver();
    cache.pollOnce(); // a new writer acts once it has listed Slurm's jobs
    assertThat(slurm.job(id).map(SlurmJob::state)).contains(JobState.RUNNING);
    assertThat(cache.jobFor("their-uid")).as("not ours to find").isEmpty();
  }

  @Test
  void ourOwnOrphanIsStillCancelled() {
    long id = placeholderOf(new PlaceholderTag("serving", "gone", "gone-uid").inCluster(CLUSTER));
    lifecycle.reconcileAll();
    assertThat(slurm.job(id).map(SlurmJob::state)).contains(JobState.CANCELLED);
  }

  @Test
  void aPlaceholderOfTheOlderFormIsOursWhenOurPodStandsForIt() {
    long mine = placeholderOf(new PlaceholderTag("serving", "llm-0", "uid-1"));
    pod("llm-0", "uid-1", Map.of());
    long unknown = placeholderOf(new PlaceholderTag("serving", "other", "other-uid"));
    lifecycle.reconcileAll();
    assertThat(actions).contains("wake serving/llm-0 -> gpu-node-3");
    assertThat(slurm.job(mine).map(SlurmJob::state)).contains(JobState.RUNNING);
    assertThat(slurm.job(unknown).map(SlurmJob::state))
        .as("no cluster named, no pod of ours: left alone")
        .contains(JobState.RUNNING);
  }
}
