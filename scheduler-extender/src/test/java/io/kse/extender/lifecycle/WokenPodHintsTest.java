package io.kse.extender.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.kse.extender.k8s.WellKnown;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Issue 29: a replica that missed a job's allocation hint learns the job from its woken pod, so it
 * does not answer kube-scheduler "not submitted" until its next full listing.
 */
class WokenPodHintsTest {
  private final Set<Long> known = Set.of(7L);
  private final List<Long> hinted = new ArrayList<>();
  private final WokenPodHints hints = new WokenPodHints(id -> !known.contains(id), hinted::add);

  @Test
  void aWokenPodNamingAJobTheCacheDoesNotKnowIsAnAllocationHint() {
    hints.accept(pod("656", null, false));

    assertThat(hinted).containsExactly(656L);
  }

  @Test
  void aJobTheCacheKnowsAlreadyCostsNothing() {
    hints.accept(pod("7", null, false));

    assertThat(hinted).isEmpty();
  }

  @Test
  void boundOrDeletedPodsAndPodsNeverWokenAreLeftAlone() {
    hints.accept(pod("656", "gpu-node-6", false));
    hints.accept(pod("656", null, true));
    hints.accept(pod(null, null, false));

    assertThat(hinted).isEmpty();
  }

  @Test
  void anAnnotationThatIsNoJobIdIsIgnored() {
    for (String bad : List.of("", "0", "-3", "12a", " 656", "99999999999999999999", "1e3")) {
      hints.accept(pod(bad, null, false));
    }

    assertThat(hinted).isEmpty();
  }

  private static Pod pod(String job, String node, boolean deleting) {
    PodBuilder b =
        new PodBuilder()
            .withNewMetadata()
            .withNamespace("ns")
            .withName("p")
            .withUid("u1")
            .endMetadata()
            .withNewSpec()
            .withSchedulerName("slurm-inference")
            .withNodeName(node)
            .endSpec();
    if (job != null) {
      b.editMetadata().addToAnnotations(WellKnown.JOB_ANNOTATION, job).endMetadata();
    }
    if (deleting) {
      b.editMetadata().withDeletionTimestamp("2026-11-27T00:00:00Z").endMetadata();
    }
    return b.build();
  }
}
