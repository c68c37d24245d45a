package io.kse.bench.service;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.kse.bench.e2e.BenchStack;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZonedDateTime;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * Memory of the extender process (the shaded jar, the JVM settings of manifests/) tracking 10,000
 * pods of its scheduler and 5,000 nodes in the real API server of the e2e stack: RSS and live heap
 * after a full GC. The stack's own extender is stopped meanwhile and the measured one is kept a
 * follower (the writer Lease is held by a made-up holder), so the 10,000 pods — gated by the
 * admission policy, never scheduled — do not become 10,000 Slurm jobs; a follower keeps the same
 * caches (pods, nodes, Slurm jobs) as the writer, which adds only its placeholder registry.
 *
 * <pre>
 * java -cp benchmarks.jar io.kse.bench.service.MemoryFootprint --env DIR/env --stack STACK
 *      --jar kse-scheduler-extender.jar [--pods 10000] [--nodes 5000] [--jvm "FLAGS"]
 * </pre>
 */
public final class MemoryFootprint {
  private static final String NS = "bench-memory";
  private static final String LABEL = "kse-bench";
  private static final int PORT = 18999;

  public static void main(String[] args) throws Exception {
    Map<String, String> a = BenchStack.args(args);
    BenchStack stack = BenchStack.from(a);
    int pods = Integer.parseInt(a.getOrDefault("pods", "10000"));
    int nodes = Integer.parseInt(a.getOrDefault("nodes", "5000"));
    String dir = stack.env("KSE_E2E_DIR");
    KubernetesClient kube = stack.kube();
    stack.command("extender-stop");
    Process p = null;
    try {
      holdLease(kube);
      long t0 = System.nanoTime();
      create(kube, pods, nodes);
      System.out.printf("memory.objects_created_s=%.0f%n", (System.nanoTime() - t0) / 1e9);
      ProcessBuilder pb =
          new ProcessBuilder(
                  java.util.stream.Stream.concat(
                          java.util.stream.Stream.concat(
                              java.util.stream.Stream.of("java", "-Xmx768m"), // 1Gi limit x 75%
                              java.util.Arrays.stream(a.getOrDefault("jvm", "").split(" "))
                                  .filter(x -> !x.isBlank())),
                          java.util.stream.Stream.of(
                              "-jar", a.get("jar"), "serve", "--config", dir + "/extender.yaml"))
                      .toList())
              .redirectErrorStream(true)
              .redirectOutput(
                  Path.of(stack.env("KSE_E2E_LOG_DIR"), "extender-memory.log").toFile());
      pb.environment().keySet().removeIf(k -> k.startsWith("KSE_"));
      pb.environment().put("KUBECONFIG", stack.env("KSE_E2E_EXTENDER_KUBECONFIG"));
      pb.environment().put("KSE_HTTP_PORT", Integer.toString(PORT + 1));
      pb.environment().put("KSE_OPS_PORT", Integer.toString(PORT));
      p = pb.start();
      long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(5);
      while (!ready() && System.nanoTime() < deadline) {
        Thread.sleep(500);
      }
      Thread.sleep(15_000); // a few Slurm polls and informer resyncs
      BenchStack.exec(List.of("jcmd", Long.toString(p.pid()), "GC.run"), Map.of());
      Thread.sleep(2_000);
      long rssKb = rssKb(p.pid());
      String heap =
          BenchStack.exec(List.of("jcmd", Long.toString(p.pid()), "GC.heap_info"), Map.of());
      System.out.printf("memory.pods=%d%nmemory.nodes=%d%n", pods, nodes);
      System.out.printf("memory.jvm_flags=-Xmx768m %s%n", a.getOrDefault("jvm", ""));
      System.out.printf("memory.rss_mib=%.0f%n", rssKb / 1024.0);
      System.out.printf("memory.heap_used_mib=%.0f%n", heapUsedKb(heap) / 1024.0);
    } finally {
      if (p != null) {
        p.destroy();
        p.waitFor(30, TimeUnit.SECONDS);
      }
      kube.namespaces().withName(NS).delete();
      kube.nodes().withLabel(LABEL).delete();
      kube.leases().inNamespace("kube-slurm-extender").withName("kube-slurm-extender").delete();
      while (kube.namespaces().withName(NS).get() != null) {
        Thread.sleep(1000);
      }
      stack.command("extender-start");
      kube.close();
    }
    System.exit(0);
  }

  /** The writer Lease held by someone else for an hour: the measured replica stays a follower. */
  private static void holdLease(KubernetesClient kube) {
    kube.leases()
        .inNamespace("kube-slurm-extender")
        .resource(
            new LeaseBuilder()
                .withNewMetadata()
                .withName("kube-slurm-extender")
                .withNamespace("kube-slurm-extender")
                .endMetadata()
                .withNewSpec()
                .withHolderIdentity("bench-memory-holder")
                .withLeaseDurationSeconds(3600)
                .withAcquireTime(ZonedDateTime.now())
                .withRenewTime(ZonedDateTime.now())
                .endSpec()
                .build())
        .createOr(x -> x.update());
  }

  private static void create(KubernetesClient kube, int pods, int nodes) throws Exception {
    kube.namespaces()
        .resource(new NamespaceBuilder().withNewMetadata().withName(NS).endMetadata().build())
        .createOr(x -> x.update());
    while (kube.serviceAccounts().inNamespace(NS).withName("default").get() == null) {
      Thread.sleep(100);
    }
    ExecutorService pool = Executors.newFixedThreadPool(16);
    for (int i = 0; i < nodes; i++) {
      int k = i;
      pool.execute(
          () ->
              kube.nodes()
                  .resource(
                      new NodeBuilder()
                          .withNewMetadata()
                          .withName("mem-node-" + k)
                          .withLabels(
                              Map.of(
                                  LABEL,
                                  "memory",
                                  "kse.io/nvlink-domain",
                                  "nvl-" + k / 4,
                                  "kubernetes.io/hostname",
                                  "mem-node-" + k))
                          .endMetadata()
                          .withNewSpec()
                          .withUnschedulable(true)
                          .endSpec()
                          .withNewStatus()
                          .withCapacity(
                              Map.of(
                                  "cpu", new Quantity("192"), "nvidia.com/gpu", new Quantity("8")))
                          .withAllocatable(
                              Map.of(
                                  "cpu", new Quantity("190"), "nvidia.com/gpu", new Quantity("8")))
                          .endStatus()
                          .build())
                  .create());
    }
    for (int i = 0; i < pods; i++) {
      int k = i;
      pool.execute(
          () ->
              kube.pods()
                  .inNamespace(NS)
                  .resource(
                      new PodBuilder()
                          .withNewMetadata()
                          .withName("llm-" + k)
                          .withLabels(Map.of("app", "llm", "serving.knative.dev/service", "llm"))
                          .endMetadata()
                          .withNewSpec()
                          .withSchedulerName("slurm-inference")
                          .addNewContainer()
                          .withName("server")
                          .withImage("registry.example/llm-server:1.0")
                          .withNewResources()
                          .withLimits(Map.of("nvidia.com/gpu", new Quantity("1")))
                          .endResources()
                          .endContainer()
                          .addNewContainer()
                          .withName("queue-proxy")
                          .withImage("registry.example/queue-proxy:1.0")
                          .endContainer()
                          .endSpec()
                          .build())
                  .create());
    }
    pool.shutdown();
    pool.awaitTermination(30, TimeUnit.MINUTES);
  }

  private static boolean ready() {
    try {
      return HttpClient.newHttpClient()
              .send(
                  HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + PORT + "/readyz"))
                      .build(),
                  HttpResponse.BodyHandlers.discarding())
              .statusCode()
          == 200;
    } catch (Exception e) {
      return false;
    }
  }

  private static long rssKb(long pid) throws Exception {
    for (String l : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
      if (l.startsWith("VmRSS:")) {
        return Long.parseLong(l.replaceAll("\\D+", ""));
      }
    }
    throw new IllegalStateException("no VmRSS for " + pid);
  }

  /** "garbage-first heap total 786432K, used 123456K" → used KiB. */
  private static long heapUsedKb(String heapInfo) {
    var m = java.util.regex.Pattern.compile("used (\\d+)K").matcher(heapInfo);
    if (!m.find()) {
      throw new IllegalStateException("cannot read the heap from: " + heapInfo);
    }
    return Long.parseLong(m.group(1));
  }
}
