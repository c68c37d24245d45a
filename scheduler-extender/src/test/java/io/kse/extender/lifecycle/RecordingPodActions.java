package io.kse.extender.lifecycle;

import io.kse.extender.k8s.EventReason;
import io.kse.extender.k8s.PodActions;
import io.kse.extender.k8s.PodRef;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * {@link PodActions} that do nothing but record each call as a line ({@code event <Reason>: …},
 * {@code evict}, {@code delete}, {@code condition <reason>}): for tests of one lifecycle part.
 */
class RecordingPodActions implements PodActions {
  final List<String> calls = new CopyOnWriteArrayList<>();

  /** What an eviction answers. */
  volatile EvictResult evictAnswer = EvictResult.EVICTED;

  @Override
  public void event(PodRef pod, EventReason reason, String message) {
    calls.add("event " + reason.reason() + ": " + message);
  }

  @Override
  public boolean wake(PodRef pod, String node, long jobId, WakeUp how) {
    calls.add("wake " + pod + " -> " + node);
    return true;
  }

  @Override
  public void ungate(PodRef pod) {
    calls.add("ungate " + pod);
  }

  @Override
  public EvictResult evict(PodRef pod, String reason) {
    calls.add("evict");
    return evictAnswer;
  }

  @Override
  public boolean delete(PodRef pod, String reason) {
    calls.add("delete");
    return true;
  }

  @Override
  public void condition(PodRef pod, boolean allocated, String reason, String message) {
    calls.add("condition " + reason);
  }
}
