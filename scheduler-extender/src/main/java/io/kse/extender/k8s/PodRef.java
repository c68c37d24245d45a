package io.kse.extender.k8s;

/** The identity of a pod, as every log line and event names it. */
public record PodRef(String namespace, String name, String uid) {
  /** The pod a placeholder job was submitted for, as its tag records it. */
  public static PodRef of(io.kse.slurm.PlaceholderTag tag) {
    return new PodRef(tag.namespace(), tag.name(), tag.uid());
  }

  /** The pod as the informer holds it. */
  public static PodRef of(io.fabric8.kubernetes.api.model.Pod pod) {
    return new PodRef(
        pod.getMetadata().getNamespace(), pod.getMetadata().getName(), pod.getMetadata().getUid());
  }

  @Override
  public String toString() {
    return namespace + "/" + name;
  }
}
