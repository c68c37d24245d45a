package io.kse.extender;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.kse.extender.k8s.KubeClients;
import io.kse.extender.tools.CheckSlurm;
import java.io.PrintWriter;
import java.time.Clock;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The composition root. {@code java -jar kse-scheduler-extender.jar} serves; {@code ... check-slurm
 * --policy FILE} compares a policy with the live Slurm. Configuration: {@code KSE_*} variables
 * ({@link ExtenderConfig}); Kubernetes access: in-cluster or {@code KUBECONFIG}.
 */
public final class Main {
  static {
    // before the logger or anything else touches ForkJoinPool: it reads its size once
    io.kse.extender.concurrent.CommonPool.keepAPool();
  }

  private static final Logger LOG = LoggerFactory.getLogger(Main.class);

  /** One of the jar's tools, as {@code CheckSlurm.run} and {@code Cleanup.run}. */
  private interface Tool {
    int run(Map<String, String> env, PrintWriter out, PrintWriter err, String... args);
  }

  public static void main(String[] args) throws Exception {
    // the jar's tools: each takes the rest of the arguments and exits with its own code
    Map<String, Tool> tools =
        Map.of("check-slurm", CheckSlurm::run, "cleanup", io.kse.extender.tools.Cleanup::run);
    if (args.length > 0 && tools.containsKey(args[0])) {
      System.exit(
          tools
              .get(args[0])
              .run(
                  System.getenv(),
                  new PrintWriter(System.out, true),
                  new PrintWriter(System.err, true),
                  java.util.Arrays.copyOfRange(args, 1, args.length)));
    }
    if (args.length > 0 && (args[0].equals("--version") || args[0].equals("version"))) {
      System.out.println("kube-slurm-extender " + BuildInfo.version());
      return;
    }
    java.util.List<String> rest = new java.util.ArrayList<>(java.util.List.of(args));
    if (!rest.isEmpty() && rest.get(0).equals("serve")) {
      rest.remove(0);
    }
    java.util.Optional<java.nio.file.Path> configFile =
        java.util.Optional.ofNullable(System.getenv("KSE_CONFIG_FILE")).map(java.nio.file.Path::of);
    if (rest.size() == 2 && rest.get(0).equals("--config")) {
      configFile = java.util.Optional.of(java.nio.file.Path.of(rest.get(1)));
    } else if (!rest.isEmpty()) {
      System.err.println(
          "usage: kse-scheduler-extender [serve [--config FILE] | check-slurm --policy FILE | cleanup [--apply] | --version]");
      System.exit(2);
    }
    ExtenderConfig config;
    try {
      config = ExtenderConfig.fromEnv(ConfigSources.merge(configFile, System.getenv()));
    } catch (IllegalArgumentException e) {
      System.err.println(e.getMessage());
      System.exit(2);
      return;
    }
    ExtenderService s;
    try {
      s = start(config, KubeClients.build(), Clock.systemUTC());
    } catch (Exception | Error e) {
      // e.g. the port is taken: never live on without a listener
      LOG.error("startup_failed error={}", e.toString(), e);
      System.err.println("kse-scheduler-extender: cannot start: " + BuildInfo.rootCause(e));
      System.exit(1);
      return;
    }
    Runtime.getRuntime().addShutdownHook(new Thread(s::close, "kse-shutdown"));
  }

  /** Wires and starts the service ({@link ExtenderService} says what runs in which order). */
  public static ExtenderService start(ExtenderConfig cfg, KubernetesClient kube, Clock clock) {
    return new ExtenderService(cfg, kube, clock).start();
  }
}
