package io.kse.bench.e2e;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodSchedulingGate;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.kse.slurm.JobState;
import io.kse.slurm.PlaceholderTag;
import io.kse.slurm.SlurmClient;
import io.kse.slurm.SlurmJob;
import java.time.Instant;
import java.util.List;
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
    open(ns, shape);
    Map<String, Long> created = new ConcurrentHashMap<>();
    try (BoundWatch watch = new BoundWatch(ns)) {
      Thread poller = allocatedAt == null ? null : allocations(ns, n, allocatedAt);
      Run run =
          measure(
              watch,
              n,
              created,
              () ->
                  fanOut(
                      n,
                      CREATORS,
                      name -> {
                        Pod p = shape.pod(ns, name);
                        created.put(name, System.nanoTime());
                        kube.pods().inNamespace(ns).resource(p).create();
                      }));
      if (poller != null) {
        poller.interrupt();
      }
      if (!keepNamespace) {
        delete(ns);
      }
      return run;
    }
  }

  /** The gate the {@link #boundAfterGateLift} pods wait behind: the benchmark's own. */
  static final String BENCH_GATE = "bench.kse.io/hold";

  /**
   * Kubernetes alone from a wake-up on, the floor of our part: {@code n} pods of {@code shape}
   * created behind a scheduling gate of the benchmark's; once the watch has seen them all, their
   * gates are lifted at once from {@code lifters} threads (8: as our wake-ups go out from the
   * extender's workers) by the write a wake-up makes — one strategic-merge patch with the pod's UID
   * and two annotations. Each pod is timed from just before its lift to bound; costs from the first
   * lift.
   */
  Run boundAfterGateLift(String ns, PodShape shape, int n, int lifters) throws Exception {
    settle(cpu);
    open(ns, shape);
    Map<String, Long> lifted = new ConcurrentHashMap<>();
    try (BoundWatch watch = new BoundWatch(ns)) {
      fanOut(
          n,
          CREATORS,
          name -> {
            Pod p = shape.pod(ns, name);
            p.getSpec().setSchedulingGates(List.of(new PodSchedulingGate(BENCH_GATE)));
            kube.pods().inNamespace(ns).resource(p).create();
          });
      awaitSize(watch.uids, n);
      settle(cpu);
      Run run =
          measure(
              watch,
              n,
              lifted,
              () ->
                  fanOut(
                      n,
                      lifters,
                      name -> {
                        String body =
                            ("{\"metadata\":{\"uid\":\"%s\",\"annotations\":{\"bench.kse.io/job\":\"%d\","
                                    + "\"bench.kse.io/node\":\"any\"}},\"spec\":{\"schedulingGates\":"
                                    + "[{\"name\":\"%s\",\"$patch\":\"delete\"}]}}")
                                .formatted(
                                    watch.uids.get(name), name.hashCode() & 0xffff, BENCH_GATE);
                        lifted.put(name, System.nanoTime());
                        kube.pods()
                            .inNamespace(ns)
                            .withName(name)
                            .patch(PatchContext.of(PatchType.STRATEGIC_MERGE), body);
                      }));
      delete(ns);
      return run;
    }
  }

  /** What a burst does: its calls, from the threads of {@link #fanOut}. */
  private interface Burst {
    void run() throws InterruptedException;
  }

  /**
   * Runs {@code burst} and waits until the watch has seen its {@code n} pods bound: each timed from
   * its entry in {@code startedAt}, the CPU and API requests of every component meanwhile.
   */
  private Run measure(BoundWatch watch, int n, Map<String, Long> startedAt, Burst burst)
      throws InterruptedException {
    Map<String, Long> cpuBefore = cpu.snapshot();
    Map<String, Long> apiBefore = api.snapshot();
    long first = System.nanoTime();
    burst.run();
    awaitSize(watch.bound, n);
    Map<String, Long> cpuSpent = CpuMeter.spent(cpuBefore, cpu.snapshot());
    Map<String, Long> apiSpent = ApiRequests.spent(apiBefore, api.settled());
    return Run.of(first, startedAt, watch.bound, n, cpuSpent, apiSpent);
  }

  /** The burst's namespace, and the claim template its pods name. */
  private void open(String ns, PodShape shape) throws InterruptedException {
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
  }

  /** {@code pod-0} … {@code pod-(n-1)}, each handed to {@code call} on one of {@code threads}. */
  private static void fanOut(int n, int threads, java.util.function.Consumer<String> call)
      throws InterruptedException {
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    for (int i = 0; i < n; i++) {
      String name = "pod-" + i;
      pool.execute(() -> call.accept(name));
    }
    pool.shutdown();
    pool.awaitTermination(5, TimeUnit.MINUTES);
  }

  /** Until {@code m} holds {@code n} entries, at most 5 minutes. */
  private static void awaitSize(Map<String, ?> m, int n) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(5);
    while (m.size() < n && System.nanoTime() < deadline) {
      Thread.sleep(10);
    }
  }

  /** The namespace's pods as the watch first shows them: their UIDs, and when each was bound. */
  private final class BoundWatch implements AutoCloseable {
    final Map<String, String> uids = new ConcurrentHashMap<>();
    final Map<String, Long> bound = new ConcurrentHashMap<>();
    private final SharedIndexInformer<Pod> informer;

    BoundWatch(String ns) {
      informer =
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
                  },
                  0);
    }

    private void seen(Pod p) {
      uids.putIfAbsent(p.getMetadata().getName(), p.getMetadata().getUid());
      if (p.getSpec().getNodeName() != null) {
        bound.putIfAbsent(p.getMetadata().getName(), System.nanoTime());
      }
    }

    @Override
    public void close() {
      informer.close();
    }
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
