package io.kse.extender;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.kse.extender.bind.BindService;
import io.kse.extender.concurrent.DaemonThreads;
import io.kse.extender.filter.FilterService;
import io.kse.extender.http.ExtenderServer;
import io.kse.extender.http.HttpLimits;
import io.kse.extender.k8s.FabricPodActions;
import io.kse.extender.k8s.FabricPodBinder;
import io.kse.extender.k8s.KubeCallerCheck;
import io.kse.extender.k8s.NodeNames;
import io.kse.extender.k8s.PodInformer;
import io.kse.extender.lifecycle.PlaceholderRegistry;
import io.kse.extender.lifecycle.PlacementReconciler;
import io.kse.extender.metrics.ExtenderMetrics;
import io.kse.extender.tools.CheckSlurm;
import io.kse.policy.PreemptionLedger;
import io.kse.policy.load.PolicyStore;
import io.kse.slurm.SlurmClients;
import io.kse.slurm.SlurmException;
import io.kse.slurm.cache.SlurmStateCache;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import java.io.PrintWriter;
import java.time.Clock;
import java.util.Deque;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The composition root. {@code java -jar kse-scheduler-extender.jar} serves; {@code ... check-slurm
 * --policy FILE} compares a policy with the live Slurm. Configuration: {@code KSE_*} variables
 * ({@link ExtenderConfig}); Kubernetes access: in-cluster or {@code KUBECONFIG}.
 */
public final class Main {
  private static final Logger LOG = LoggerFactory.getLogger(Main.class);

  /**
   * How often every placement is re-checked besides its own changes: the bound on how long a missed
   * change can go unnoticed (a pass over 10,000 pods costs a few milliseconds).
   */
  static final java.time.Duration RECONCILE_PERIOD = java.time.Duration.ofSeconds(2);

  /** The running service; {@link #close} stops it in reverse start order. */
  public static final class Service implements AutoCloseable {
    private final Deque<Runnable> stops = new java.util.concurrent.ConcurrentLinkedDeque<>();
    private final AtomicBoolean stopped = new AtomicBoolean();
    private volatile int port;
    private volatile int opsPort;

    void onStop(Runnable r) {
      stops.push(r);
    }

    /** The port of /healthz, /readyz, /metrics and /explain. */
    public int opsPort() {
      return opsPort;
    }

    public int port() {
      return port;
    }

    @Override
    public void close() {
      if (!stopped.compareAndSet(false, true)) {
        return;
      }
      while (!stops.isEmpty()) {
        try {
          stops.pop().run();
        } catch (RuntimeException e) {
          LOG.warn("shutdown_step_failed error={}", e.toString());
        }
      }
      LOG.info("stopped");
    }
  }

  public static void main(String[] args) throws Exception {
    if (args.length > 0 && args[0].equals("check-slurm")) {
      System.exit(
          CheckSlurm.run(
              System.getenv(),
              new PrintWriter(System.out, true),
              new PrintWriter(System.err, true),
              java.util.Arrays.copyOfRange(args, 1, args.length)));
    }
    if (args.length > 0 && (args[0].equals("--version") || args[0].equals("version"))) {
      System.out.println("kube-slurm-extender " + version());
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
          "usage: kse-scheduler-extender [serve [--config FILE] | check-slurm --policy FILE | --version]");
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
    Service s;
    try {
      s = start(config, new KubernetesClientBuilder().build(), Clock.systemUTC());
    } catch (Exception | Error e) {
      // e.g. the port is taken: never live on without a listener
      LOG.error("startup_failed error={}", e.toString(), e);
      System.err.println("kse-scheduler-extender: cannot start: " + rootCause(e));
      System.exit(1);
      return;
    }
    Runtime.getRuntime().addShutdownHook(new Thread(s::close, "kse-shutdown"));
  }

  /** The innermost cause's message: what an operator needs in one line. */
  static String rootCause(Throwable e) {
    Throwable t = e;
    while (t.getCause() != null && t.getCause() != t) {
      t = t.getCause();
    }
    return t.getMessage() == null ? t.toString() : t.getMessage();
  }

  /** How long the Slurm cache and pod informer may take to sync before the process gives up. */
  static final java.time.Duration SYNC_LIMIT = java.time.Duration.ofMinutes(5);

  static String version() {
    String v = Main.class.getPackage().getImplementationVersion();
    return v == null ? "dev" : v;
  }

  public static Service start(ExtenderConfig cfg, KubernetesClient kube, Clock clock)
      throws Exception {
    Service svc = new Service();
    LOG.info(
        "starting version={} scheduler={} policy={} slurm={}",
        version(),
        cfg.schedulerName(),
        cfg.policyFile(),
        cfg.slurm());
    svc.onStop(kube::close);
    PrometheusMeterRegistry prometheus = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    ExtenderMetrics metrics = new ExtenderMetrics(prometheus);

    PolicyStore policy = new PolicyStore(cfg.policyFile());
    policy.addListener(o -> metrics.policyReload(o.result().name().toLowerCase()));
    policy.watch(cfg.policyReload());
    svc.onStop(policy::close);

    DeferredSlurmClient slurm = new DeferredSlurmClient();
    svc.onStop(slurm::close);
    SlurmStateCache cache =
        new SlurmStateCache(
            slurm, cfg.slurm().pollInterval(), cfg.slurm().resyncInterval(), clock, prometheus);
    svc.onStop(cache::close);

    PlaceholderRegistry registry = new PlaceholderRegistry();
    NodeNames nodeNames = new NodeNames();
    PreemptionLedger ledger = new PreemptionLedger();
    FabricPodActions actions = new FabricPodActions(kube, clock);
    svc.onStop(actions::close);
    PodInformer pods =
        new PodInformer(kube, cfg.schedulerName(), cfg.kubeNamespace(), cfg.podFieldSelector());
    svc.onStop(pods::close);
    // stopped in reverse: the workers drain before the pod actions they use are closed
    ExecutorService workers =
        Executors.newFixedThreadPool(cfg.workers(), DaemonThreads.named("kse-worker"));
    svc.onStop(
        () -> {
          workers.shutdown();
          try {
            workers.awaitTermination(10, TimeUnit.SECONDS);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        });

    java.util.concurrent.atomic.AtomicReference<io.kse.extender.k8s.WriterLease> lease =
        new java.util.concurrent.atomic.AtomicReference<>();
    java.util.function.BooleanSupplier isWriter =
        cfg.leaderElection() ? () -> lease.get() != null && lease.get().getAsBoolean() : () -> true;
    java.util.function.BooleanSupplier synced = () -> cache.synced() && pods.synced();
    io.kse.extender.k8s.NodeInformer kubeNodes = new io.kse.extender.k8s.NodeInformer(kube);
    svc.onStop(kubeNodes::close);
    ExecutorService passes =
        Executors.newSingleThreadExecutor(DaemonThreads.named("kse-reconcile"));
    svc.onStop(passes::shutdownNow);
    PlacementReconciler reconciler =
        new PlacementReconciler(
            slurm,
            cache,
            policy::placement,
            ledger,
            registry,
            pods,
            actions,
            nodeNames,
            java.util.Optional.of(kubeNodes),
            clock,
            passes,
            workers,
            () -> isWriter.getAsBoolean() && synced.getAsBoolean(),
            cfg.placeholderWorkDir(),
            cfg.placeholderShape(),
            cfg.pdbOverride(),
            metrics);
    cache.addJobListener(reconciler::onJobChange);
    // level-triggered: besides every pod and job change, every placement is checked periodically,
    // so nothing depends on a change having been seen (kube-scheduler may not call for minutes)
    java.util.concurrent.ScheduledExecutorService housekeeping =
        Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("kse-housekeeping"));
    svc.onStop(housekeeping::shutdownNow);
    housekeeping.scheduleWithFixedDelay(
        guarded(synced, reconciler::reconcileAll),
        RECONCILE_PERIOD.toMillis(),
        RECONCILE_PERIOD.toMillis(),
        TimeUnit.MILLISECONDS);

    // cordon <-> drain sync, serialised on one thread
    ExecutorService nodeSyncThread =
        Executors.newSingleThreadExecutor(DaemonThreads.named("kse-node-sync"));
    svc.onStop(nodeSyncThread::shutdownNow);
    io.kse.slurm.NodeAdmin nodeAdmin =
        cfg.drainVia().equals("scontrol")
            ? new io.kse.slurm.cli.ScontrolNodeAdmin("scontrol", cfg.scontrolConf().orElseThrow())
            : io.kse.slurm.NodeAdmin.rest(slurm);
    io.kse.extender.k8s.NodeSync nodeSync =
        new io.kse.extender.k8s.NodeSync(kubeNodes, cache, nodeAdmin, nodeNames, isWriter);

    FilterService filter = new FilterService(cache, registry, nodeNames, reconciler::enqueue);
    BindService bind =
        new BindService(
            cache, pods, nodeNames, new FabricPodBinder(kube), actions, reconciler::bound);
    ExplainService explain =
        new ExplainService(pods, policy::placement, ledger, registry, cache, clock);
    AtomicBoolean accepting = new AtomicBoolean(true);
    ExtenderConfig.Http h = cfg.http();
    HttpLimits limits =
        new HttpLimits(
            h.bodyBytes(),
            h.inFlightBytes(),
            h.maxConnections(),
            h.bodyTimeout(),
            h.idleTimeout(),
            h.verbThreads(),
            h.queuedVerbs(),
            cfg.workers(),
            HttpLimits.nodeNamesFor(kubeNodes::size, h.nodeNamesFloor()));
    ExtenderServer routes =
        new ExtenderServer(
            filter,
            bind,
            metrics,
            () -> accepting.get() && slurm.isConnected() && synced.getAsBoolean(),
            synced,
            prometheus::scrape,
            explain::explain,
            new KubeCallerCheck(kube, clock),
            limits,
            clock);
    svc.onStop(routes::close);

    Vertx vertx = Vertx.vertx();
    svc.onStop(() -> await(vertx.close()));
    HttpServer ops = await(routes.listenOps(vertx, cfg.http().opsHost(), cfg.http().opsPort()));
    svc.opsPort = ops.actualPort();
    svc.onStop(() -> await(ops.shutdown(10, TimeUnit.SECONDS)));
    HttpServer server = await(routes.listen(vertx, cfg.host(), cfg.port(), cfg.http().tls()));
    svc.port = server.actualPort();
    svc.onStop(() -> await(server.shutdown(10, TimeUnit.SECONDS)));
    svc.onStop(() -> accepting.set(false)); // first: stop being ready
    LOG.info(
        "listening host={} port={} tls={} opsHost={} opsPort={}",
        cfg.host(),
        server.actualPort(),
        cfg.http().tls().isPresent(),
        cfg.http().opsHost(),
        ops.actualPort());

    // Slurm may not be reachable yet: keep trying in the background; health stays up, ready does
    // not
    Runnable becomeWriter =
        () -> {
          if (cfg.leaderElection()) {
            // the pod's name (downward API) survives a container restart, so a restarted writer
            // takes its own Lease back at once instead of waiting for it to expire
            String identity =
                java.util.Optional.ofNullable(System.getenv("POD_NAME"))
                    .filter(n -> !n.isBlank())
                    .orElseGet(
                        () ->
                            System.getenv().getOrDefault("HOSTNAME", "kse")
                                + "_"
                                + java.util.UUID.randomUUID());
            io.kse.extender.k8s.WriterLease l =
                new io.kse.extender.k8s.WriterLease(
                    kube, cfg.leaseNamespace(), cfg.leaseName(), identity, reconciler::takeOver);
            lease.set(l);
            svc.onStop(l::close);
          } else {
            reconciler.takeOver();
          }
        };
    Runnable startNodeSync =
        () -> {
          kubeNodes.start(nodeNames, n -> nodeSyncThread.execute(() -> sync(cfg, nodeSync, n)));
          // level-triggered like placements: every node pair, periodically, on the same thread
          housekeeping.scheduleWithFixedDelay(
              () -> nodeSyncThread.execute(() -> syncAll(cfg, nodeSync)),
              RECONCILE_PERIOD.toMillis(),
              RECONCILE_PERIOD.toMillis(),
              TimeUnit.MILLISECONDS);
          cache.addNodeListener(
              (before, after) ->
                  after.ifPresent(
                      n ->
                          nodeSyncThread.execute(
                              () -> sync(cfg, nodeSync, nodeNames.kubernetes(n.name())))));
        };
    Thread connector =
        new Thread(
            () -> {
              try {
                connect(
                    cfg, slurm, prometheus, cache, pods, reconciler, becomeWriter, startNodeSync);
              } catch (RuntimeException | Error e) {
                // a service that can never become ready must not look alive: exit, the kubelet
                // restarts it and the operator sees the one line why
                LOG.error("startup_failed phase=connect error={}", e.toString(), e);
                System.err.println("kse-scheduler-extender: cannot start: " + rootCause(e));
                System.exit(1);
              }
            },
            "kse-slurm-connect");
    connector.setDaemon(true);
    connector.start();
    return svc;
  }

  private static void connect(
      ExtenderConfig cfg,
      DeferredSlurmClient slurm,
      PrometheusMeterRegistry prometheus,
      SlurmStateCache cache,
      PodInformer pods,
      PlacementReconciler reconciler,
      Runnable becomeWriter,
      Runnable startNodeSync) {
    long delay = 500;
    while (!slurm.isConnected()) {
      try {
        slurm.connected(SlurmClients.connect(cfg.slurm(), prometheus));
        LOG.info(
            "slurm_connected url={} apiVersion={}", cfg.slurm().url(), slurm.apiVersion().id());
      } catch (SlurmException e) {
        slurm.failed(e.getMessage());
        LOG.warn(
            "slurm_connect_failed url={} retryInMs={} error={}",
            cfg.slurm().url(),
            delay,
            e.getMessage());
        sleep(delay);
        delay = Math.min(delay * 2, 10_000);
      }
    }
    cache.start();
    pods.start(reconciler::onPod, reconciler::onPodDeleted);
    // restart safety: once both views are complete, cancel placeholders whose pod is gone
    long deadline = System.nanoTime() + SYNC_LIMIT.toNanos();
    while (!(cache.synced() && pods.synced())) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(
            "not synced within "
                + SYNC_LIMIT.toMinutes()
                + " min (Slurm cache synced: "
                + cache.synced()
                + ", pod informer synced: "
                + pods.synced()
                + ")");
      }
      sleep(100);
    }
    LOG.info("synced slurmJobs={} pods={}", cache.snapshot().jobs().size(), pods.pods().size());
    becomeWriter.run(); // the writer sweeps orphans and re-checks every pending pod
    startNodeSync.run();
  }

  /** A periodic task that runs only when {@code when} holds and never dies of an exception. */
  private static Runnable guarded(
      java.util.function.BooleanSupplier when, java.util.function.IntSupplier task) {
    return () -> {
      try {
        if (when.getAsBoolean()) {
          task.getAsInt();
        }
      } catch (RuntimeException e) {
        LOG.warn("housekeeping_failed error={}", e.toString());
      }
    };
  }

  private static void sync(ExtenderConfig cfg, io.kse.extender.k8s.NodeSync nodeSync, String node) {
    if (!cfg.drainVia().equals("off")) {
      try {
        nodeSync.reconcile(node);
      } catch (RuntimeException e) {
        LOG.warn("node_sync_failed node={} error={}", node, e.toString());
      }
    }
  }

  private static void syncAll(ExtenderConfig cfg, io.kse.extender.k8s.NodeSync nodeSync) {
    if (!cfg.drainVia().equals("off")) {
      try {
        nodeSync.reconcileAll();
      } catch (RuntimeException e) {
        LOG.warn("node_sync_failed error={}", e.toString());
      }
    }
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static <T> T await(io.vertx.core.Future<T> f) {
    try {
      return f.toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }
}
