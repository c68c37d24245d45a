package io.kse.bench.e2e;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.kse.extender.k8s.KubeClients;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * What reading from the API server costs the extender's JVM per MB, with fabric8's client as it
 * comes (TLS: AES-GCM) and as the extender builds it ({@link KubeClients}: ChaCha20-Poly1305
 * first). Run it with the Deployment's compiler flags (quick compiler only), as the extender runs:
 *
 * <pre>
 *   java -XX:TieredStopAtLevel=1 -XX:CompileThresholdScaling=0.1 -cp benchmarks/target/benchmarks.jar \
 *     io.kse.bench.e2e.TlsCost --env DIR/env [--pods 200] [--rounds 40] [--pairs 3]
 * </pre>
 *
 * <p>Lists {@code pods} pending pods of a scheduler nobody runs, {@code rounds} times per client
 * and pair, alternating; prints this process's CPU per list and per MB listed. Both clients decode
 * the same JSON into the same objects: the difference is the TLS record decryption.
 */
public final class TlsCost {
  private TlsCost() {}

  public static void main(String[] argv) throws Exception {
    Map<String, String> a = BenchStack.args(argv);
    BenchStack stack = BenchStack.from(a);
    int pods = Integer.parseInt(a.getOrDefault("pods", "200"));
    int rounds = Integer.parseInt(a.getOrDefault("rounds", "40"));
    int pairs = Integer.parseInt(a.getOrDefault("pairs", "3"));
    Config config = Config.fromKubeconfig(Files.readString(Path.of(stack.env("KUBECONFIG"))));
    String ns = "bench-tls-cost";
    try (KubernetesClient admin = stack.kube()) {
      admin
          .namespaces()
          .resource(new NamespaceBuilder().withNewMetadata().withName(ns).endMetadata().build())
          .serverSideApply();
      while (admin.serviceAccounts().inNamespace(ns).withName("default").get() == null) {
        Thread.sleep(100);
      }
      Pod shape = PodShape.gpus("nobody-runs-this-scheduler", 1).pod(ns, "p");
      for (int i = admin.pods().inNamespace(ns).list().getItems().size(); i < pods; i++) {
        shape.getMetadata().setName("p-" + i);
        admin.pods().inNamespace(ns).resource(shape).create();
      }
      List<Pod> listed = admin.pods().inNamespace(ns).list().getItems();
      double mb = Serialization.asJson(listed).length() / 1e6;
      System.out.printf("tls_cost.pods=%d%ntls_cost.list_mb=%.2f%n", listed.size(), mb);
      Map<String, Function<Config, KubernetesClient>> clients =
          Map.of(
              "fabric8_default",
              c -> new KubernetesClientBuilder().withConfig(c).build(),
              "extender",
              KubeClients::build);
      for (int pair = 0; pair < pairs; pair++) {
        for (String name : List.of("fabric8_default", "extender")) {
          try (KubernetesClient k = clients.get(name).apply(config)) {
            for (int i = 0; i < rounds / 2; i++) { // compiled before it is measured
              k.pods().inNamespace(ns).list();
            }
            long cpu0 = cpu();
            for (int i = 0; i < rounds; i++) {
              k.pods().inNamespace(ns).list();
            }
            double ms = (cpu() - cpu0) / 1e6;
            System.out.printf(
                "tls_cost.%s.%d cpu_ms_per_list=%.1f cpu_ms_per_mb=%.1f%n",
                name, pair, ms / rounds, ms / (rounds * mb));
          }
        }
      }
      admin.namespaces().withName(ns).delete();
    }
  }

  private static long cpu() {
    return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
        .getProcessCpuTime();
  }
}
