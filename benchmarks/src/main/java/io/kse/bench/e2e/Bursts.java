package io.kse.bench.e2e;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.kse.slurm.JobState;
import io.kse.slurm.PlaceholderTag;
import io.kse.slurm.SlurmClient;
import io.kse.slurm.SlurmJob;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * Bursts of pods on the stack: {@code n} pods created at once in a namespace of their own (from
 * {@value #CREATORS} threads), each timed from just before its create call to when the watch first
 * shows it bound, with the CPU and API requests every component spent meanwhile; optionally when
 * each pod's placeholder was first seen RUNNING. The namespace is deleted after, and the next burst
 * starts once no placeholder of it lives.
 */
final class Bursts {
  static final int CREATORS = 8;

  private final KubernetesClient kube;
  private final SlurmClient slurm;
  private final CpuMeter cpu;
  private final ApiRequests api;

  Bursts(KubernetesClient kube, SlurmClient slurm, CpuMeter cpu, ApiRequests api) {
    this.kube = kube;
    this.slurm = slurm;
    this.cpu = cpu;
    this.api = api;
  }

  /** A burst whose namespace is deleted once it is measured. */
  Run bound(String ns, PodShape shape, int n) throws Exception {
    return bound(ns, shape, n, null, false);
  }

  /**
   * @param allocatedAt when given, filled with when each pod's placeholder is first seen RUNNING
   * @param keepNamespace leave the namespace for the caller to read and delete ({@link #delete})
   */
  Run bound(String ns, PodShape shape, int n, Map<String, Long> allocatedAt, boolean keepNamespace)
      throws Exception {
    settle(cpu);
    kube.namespaces()
        .resource(new NamespaceBuilder().withNewMetadata().withName(ns).endMetadata().build())
        .create();
    while (kube.serviceAccounts().inNamespace(ns).withName("default").get() == null) {
      Thread.sleep(100);
    }
    // what the pods' annotation names (manifests/base/gpu-share-claims.yaml)
    shape
        .shareTemplate()
        .ifPresent(
            t ->
                kube.resource(
                        ("apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\n"
                                + "metadata: {name: %s, namespace: %s}\n"
                                + "spec:\n  spec:\n    devices:\n      requests:\n"
                                + "        - name: gpus\n          exactly: {deviceClassName:"
                                + " gpu.nvidia.com, capacity: {requests: {shares: \"1\"}}}\n")
                            .formatted(t, ns))
                    .create());
    Map<String, Long> created = new ConcurrentHashMap<>();
    Map<String, Long> bound = new ConcurrentHashMap<>();
    SharedIndexInformer<Pod> informer =
        kube.pods()
            .inNamespace(ns)
            .inform(
                new ResourceEventHandler<>() {
                  @Override
                  public void onAdd(Pod p) {
                    seen(p);
                  }

                  @Override
                  public void onUpdate(Pod o, Pod p) {
                    seen(p);
                  }

                  @Override
                  public void onDelete(Pod p, boolean unknown) {}

                  private void seen(Pod p) {
                    if (p.getSpec().getNodeName() != null) {
                      bound.putIfAbsent(p.getMetadata().getName(), System.nanoTime());
                    }
                  }
                },
                0);
    Thread poller = allocatedAt == null ? null : allocations(ns, n, allocatedAt);
    ExecutorService pool = Executors.newFixedThreadPool(CREATORS);
    Map<String, Long> cpuBefore = cpu.snapshot();
    Map<String, Long> apiBefore = api.snapshot();
    long first = System.nanoTime();
    for (int i = 0; i < n; i++) {
      String name = "pod-" + i;
      pool.execute(
          () -> {
            Pod p = shape.pod(ns, name);
            created.put(name, System.nanoTime());
            kube.pods().inNamespace(ns).resource(p).create();
          });
    }
    pool.shutdown();
    pool.awaitTermination(5, TimeUnit.MINUTES);
    long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(5);
    while (bound.size() < n && System.nanoTime() < deadline) {
      Thread.sleep(10);
    }
    Map<String, Long> cpuSpent = CpuMeter.spent(cpuBefore, cpu.snapshot());
    Map<String, Long> apiSpent = ApiRequests.spent(apiBefore, api.settled());
    if (poller != null) {
      poller.interrupt();
    }
    informer.close();
    Run run = Run.of(first, created, bound, n, cpuSpent, apiSpent);
    if (!keepNamespace) {
      delete(ns);
    }
    return run;
  }

  /** A thread recording when each placeholder of the namespace is first seen RUNNING. */
  private Thread allocations(String ns, int n, Map<String, Long> allocatedAt) {
    Thread poller;
    if (n == 1) {
      // before the pod exists: its placeholder's id comes after every id Slurm has now
      long firstId =
          slurm.jobsChangedSince(Instant.EPOCH).jobs().stream()
                  .mapToLong(SlurmJob::id)
                  .max()
                  .orElse(0)
              + 1;
      poller = new Thread(() -> watchOneJob(ns, allocatedAt, firstId));
    } else {
      poller =
          new Thread(
              () -> {
                while (!Thread.currentThread().isInterrupted() && allocatedAt.size() < n) {
                  long now = System.nanoTime();
                  for (SlurmJob j : slurm.jobsChangedSince(Instant.EPOCH).jobs()) {
                    j.placeholder()
                        .filter(t -> t.namespace().equals(ns))
                        .filter(t -> j.state() == JobState.RUNNING)
                        .ifPresent(t -> allocatedAt.putIfAbsent(t.name(), now));
                  }
                  try {
                    Thread.sleep(50);
                  } catch (InterruptedException e) {
                    return;
                  }
                }
              });
    }
    poller.start();
    return poller;
  }

  /**
   * One pod's placeholder seen RUNNING within 5 ms: Slurm numbers jobs in order, so the next job
   * ids are read one by one (a few KB each) until one is this namespace's, then that job alone. A
   * 50 ms listing of the whole job table was slower than the hint-woken extender (the pod was often
   * bound before the listing showed its job running).
   */
  private void watchOneJob(String ns, Map<String, Long> allocatedAt, long firstId) {
    long next = firstId;
    long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
    while (!Thread.currentThread().isInterrupted() && System.nanoTime() < deadline) {
      long now = System.nanoTime();
      Optional<SlurmJob> j = slurm.job(next);
      if (j.isPresent()) {
        Optional<PlaceholderTag> t = j.get().placeholder();
        if (t.isEmpty() || !t.get().namespace().equals(ns) || j.get().state().isFinal()) {
          next++; // someone else's, or a replaced placeholder: the next id
          continue;
        }
        if (j.get().state() == JobState.RUNNING) {
          allocatedAt.putIfAbsent(t.get().name(), now);
          return;
        }
      }
      try {
        Thread.sleep(5);
      } catch (InterruptedException e) {
        return;
      }
    }
  }

  /** Deletes the namespace and waits until none of its placeholders lives. */
  void delete(String ns) throws Exception {
    kube.namespaces().withName(ns).delete();
    while (kube.namespaces().withName(ns).get() != null) {
      Thread.sleep(200);
    }
    awaitNoLive(ns);
  }

  /**
   * Waits until no job tagged with {@code namespace} is alive: the next run starts on free GPUs.
   */
  void awaitNoLive(String namespace) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
    // COMPLETING too: its job steps end and its Epilog runs now, on the cores the next run uses
    while (System.nanoTime() < deadline
        && slurm.jobsChangedSince(Instant.EPOCH).jobs().stream()
            .anyMatch(
                j ->
                    !j.state().isFinal()
                        && j.placeholder()
                            .map(t -> t.namespace().equals(namespace))
                            .orElse(false))) {
      Thread.sleep(200);
    }
  }

  /** The stack's CPU, all components, below which a measured run may begin: a quarter core. */
  static final long QUIET_MS_PER_S = 250;

  /**
   * Waits (at most a minute) until the stack uses less than {@link #QUIET_MS_PER_S} of CPU a
   * second: a run must not pay for the last one's teardown. The Kubernetes floor of 2026-11-28 and
   * -29 did (200 slurmd job steps of the Slurm floor ending under it: 79 CPU-ms per pod in slurmd,
   * its makespan 6.9-10.9 s where it had been 2.5).
   */
  static void settle(CpuMeter cpu) throws InterruptedException {
    long began = System.nanoTime();
    long deadline = began + TimeUnit.MINUTES.toNanos(1);
    long used;
    do {
      Map<String, Long> before = cpu.snapshot();
      Thread.sleep(1000);
      Map<String, Long> spent = CpuMeter.spent(before, cpu.snapshot());
      used = CpuMeter.stackTotal(spent);
    } while (used >= QUIET_MS_PER_S && System.nanoTime() < deadline);
    System.err.printf(
        "[bench] settled after %d ms (stack CPU %d ms in the last second)%n",
        (System.nanoTime() - began) / 1_000_000, used);
  }
}
