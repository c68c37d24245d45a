package io.kse.extender.k8s;

/** The identity of a pod, as every log line and event names it. */
public record PodRef(String namespace, String name, String uid) {
  @Override
  public String toString() {
    return namespace + "/" + name;
  }
}
