package io.kse.extender;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.kse.extender.bind.BindService;
import io.kse.extender.concurrent.DaemonThreads;
import io.kse.extender.concurrent.Waits;
import io.kse.extender.filter.FilterService;
import io.kse.extender.http.ExtenderServer;
import io.kse.extender.k8s.ClusterIdentity;
import io.kse.extender.k8s.ConfigMapLedgerStore;
import io.kse.extender.k8s.FabricPodActions;
import io.kse.extender.k8s.FabricPodBinder;
import io.kse.extender.k8s.KubeCallerCheck;
import io.kse.extender.k8s.NodeInformer;
import io.kse.extender.k8s.NodeNames;
import io.kse.extender.k8s.NodeSync;
import io.kse.extender.k8s.NodeUpkeep;
import io.kse.extender.k8s.PodGroupInformer;
import io.kse.extender.k8s.PodInformer;
import io.kse.extender.k8s.QuietEvents;
import io.kse.extender.k8s.TopologyCheck;
import io.kse.extender.k8s.WriterLease;
import io.kse.extender.lifecycle.PlaceholderRegistry;
import io.kse.extender.lifecycle.PlacementReconciler;
import io.kse.extender.lifecycle.SavedLedger;
import io.kse.extender.metrics.ExtenderMetrics;
import io.kse.policy.PreemptionLedger;
import io.kse.policy.load.PolicyStore;
import io.kse.policy.model.GpuShares;
import io.kse.slurm.NodeAdmin;
import io.kse.slurm.SlurmClients;
import io.kse.slurm.cache.SlurmStateCache;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import java.time.Clock;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The running service. The constructor wires every part (no thread, socket or API call yet); {@link
 * #start} runs the named steps below in order, and {@link #close} undoes the steps that ran, newest
 * first, each bounded in time. What starts, in order:
 *
 * <ol>
 *   <li>policy: load the file (fatal if invalid) and watch it;
 *   <li>the periodic passes (they act only once this replica is the synced writer);
 *   <li>http: listen for ops (health, metrics, explain), then for the verbs;
 *   <li>in the background: connect to Slurm (retrying), learn whose placeholders are ours (cluster
 *       identity, Slurm user), then the Slurm cache, the PodGroup and pod informers until the cache
 *       and pods are synced (ready from then on), then the writer Lease and the node sync.
 * </ol>
 */
public final class ExtenderService implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ExtenderService.class);

  /**
   * How often every placement and node pair is re-checked besides their own changes: the bound on
   * how long a missed change can go unnoticed (a pass over 10,000 pods costs a few milliseconds).
   */
  static final Duration RECONCILE_PERIOD = Duration.ofSeconds(2);

  /** How long the Slurm cache and pod informer may take to sync, at least, before giving up. */
  static final Duration MIN_SYNC_LIMIT = Duration.ofMinutes(5);

  /**
   * How long a start waits to sync: never less than the start-up listing of slurmctld's job table
   * may take, plus a minute to read it. A fixed five minutes gave up on a listing allowed ten: at
   * 50,000 jobs on 10,000 nodes the restarted extender exited, its listing still unanswered (issue
   * 47), and would have again on every restart.
   */
  static Duration syncLimit(Duration listingTimeout) {
    Duration listed = listingTimeout.plus(Duration.ofMinutes(1));
    return listed.compareTo(MIN_SYNC_LIMIT) > 0 ? listed : MIN_SYNC_LIMIT;
  }

  /** How long each stop step may take. */
  static final Duration STOP_STEP = Duration.ofSeconds(10);

  private final ExtenderConfig cfg;
  private final KubernetesClient kube;
  private final PrometheusMeterRegistry prometheus =
      new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  private final ExtenderMetrics metrics = new ExtenderMetrics(prometheus);
  private final PolicyStore policy;
  private final DeferredSlurmClient slurm = new DeferredSlurmClient();
  private final SlurmStateCache cache;
  private final PodInformer pods;
  private final NodeInformer kubeNodes;
  private final PodGroupInformer podGroups;
  private final ClusterIdentity cluster;
  private final NodeNames nodeNames = new NodeNames();
  private final FabricPodActions kubeActions;

  /** What every component uses: the API's actions, with Events said once ({@link QuietEvents}). */
  private final QuietEvents actions;

  private final ExecutorService workers;
  private final ExecutorService passes =
      Executors.newSingleThreadExecutor(DaemonThreads.named("kse-reconcile"));
  private final ScheduledExecutorService housekeeping =
      Executors.newSingleThreadScheduledExecutor(DaemonThreads.named("kse-housekeeping"));
  private final AtomicReference<WriterLease> lease = new AtomicReference<>();
  private final BooleanSupplier isWriter;
  private final BooleanSupplier synced;
  private final PlacementReconciler reconciler;
  private final NodeUpkeep nodeUpkeep;
  private final ExtenderServer routes;
  private final io.kse.slurm.cache.AllocationHints hints;
  private final SavedLedger savedLedger;
  private volatile Vertx vertx;
  private final AtomicBoolean accepting = new AtomicBoolean(true);
  private final StartedSteps started = new StartedSteps();
  private final AtomicBoolean stopped = new AtomicBoolean();

  /** The hot paths have run once before ready ({@link WarmUp}). */
  private final AtomicBoolean warm = new AtomicBoolean();

  private volatile int port;
  private volatile int opsPort;

  public ExtenderService(ExtenderConfig cfg, KubernetesClient kube, Clock clock) {
    this.cfg = cfg;
    this.kube = kube;
    this.policy = new PolicyStore(cfg.policyFile()); // an invalid first policy is fatal
    this.cache = new SlurmStateCache(slurm, cfg.slurm().cadence(), clock, prometheus);
    cache.addListingListener(new HeapAfterLargeListing(System::gc));
    this.pods =
        new PodInformer(kube, cfg.schedulerName(), cfg.kubeNamespace(), cfg.podFieldSelector());
    this.kubeNodes = new NodeInformer(kube);
    this.podGroups = new PodGroupInformer(kube);
    this.cluster = ClusterIdentity.unresolved(cfg.clusterId());
    this.kubeActions = new FabricPodActions(kube, clock);
    this.actions = new QuietEvents(kubeActions, clock, cfg.eventQuiet());
    this.workers = Executors.newFixedThreadPool(cfg.workers(), DaemonThreads.named("kse-worker"));
    this.isWriter =
        cfg.leaderElection() ? () -> lease.get() != null && lease.get().getAsBoolean() : () -> true;
    this.synced = () -> cache.synced() && pods.synced();
    this.hints =
        new io.kse.slurm.cache.AllocationHints(cache, cfg.allocationHint().minGap(), prometheus);
    PlaceholderRegistry registry = new PlaceholderRegistry();
    PreemptionLedger ledger = new PreemptionLedger();
    this.savedLedger =
        new SavedLedger(
            ledger,
            new ConfigMapLedgerStore(kube, cfg.leaseNamespace(), cfg.leaseName() + "-preemptions"),
            policy::placement,
            clock);
    // what the alerts watch (manifests/overlays/monitoring/prometheus-rule.yaml)
    metrics.writer(isWriter);
    metrics.oldestPending(
        () ->
            io.kse.extender.lifecycle.PendingAges.oldestByTier(
                registry.current(), cache::job, clock.instant()));
    metrics.budgetUse(() -> policy.placement().budgetUse(ledger, clock.instant()));
    ExtenderConfig.Dra dra = cfg.dra();
    io.kse.extender.dra.GpuClaims gpuClaims =
        new io.kse.extender.dra.FabricGpuClaims(
            kube, dra.gpuDeviceClasses(), dra.driver(), dra.indexAttribute(), this::shareCapacity);
    this.reconciler =
        PlacementReconciler.wire(
            new PlacementReconciler.Views(
                cache,
                pods,
                podGroups,
                nodeNames,
                Optional.of(kubeNodes),
                registry,
                cluster,
                () -> isWriter.getAsBoolean() && synced.getAsBoolean()),
            // every job we submit, change or cancel is followed by the cache from that moment
            new PlacementReconciler.Calls(
                cache.tracking(slurm), cache, actions, gpuClaims, passes, workers, metrics, clock),
            new PlacementReconciler.Settings(
                policy::placement,
                ledger,
                cfg.placeholderWorkDir(),
                cfg.placeholderShape(),
                cfg.pdbOverride(),
                cfg.groupIncompleteWait(),
                cfg.nominateFromNodes(),
                // told why they wait when they have waited as long as their Events are held
                cfg.eventQuiet()));
    NodeAdmin nodeAdmin = NodeAdmins.of(cfg, slurm);
    TopologyCheck topologyCheck =
        new TopologyCheck(
            kubeNodes,
            cache::nodes,
            nodeNames,
            () -> policy.policy().cluster(),
            kubeNodes::warn,
            clock,
            cfg.nodeLabelSync());
    this.nodeUpkeep =
        new NodeUpkeep(
            kubeNodes,
            nodeNames,
            new NodeSync(kubeNodes, cache, cache::refreshNodes, nodeAdmin, nodeNames, isWriter),
            topologyCheck,
            cfg.drainVia() != ExtenderConfig.DrainVia.OFF,
            isWriter);
    metrics.topologyDrift(() -> topologyCheck.differences().size());
    ExtenderConfig.Http h = cfg.http();
    this.routes =
        new ExtenderServer(
            new FilterService(
                cache,
                registry,
                nodeNames,
                reconciler::enqueue,
                reconciler::placementOf,
                hints::allocated),
            new BindService(
                cache,
                pods,
                nodeNames,
                new FabricPodBinder(kube),
                actions,
                reconciler::bound,
                reconciler::placementOf,
                gpuClaims),
            metrics,
            () -> accepting.get() && warm.get() && slurm.isConnected() && synced.getAsBoolean(),
            synced,
            () -> {
              metrics.beforeScrape();
              return prometheus.scrape();
            },
            new ExplainService(
                    reconciler::placementOf,
                    reconciler::decide,
                    pods,
                    registry,
                    cache,
                    reconciler::toldWaiting)
                ::explain,
            new KubeCallerCheck(kube, clock),
            h.limits(),
            h.limits().nodeNamesFor(kubeNodes::size),
            clock);
    io.kse.extender.lifecycle.GpuHold gpuHold =
        new io.kse.extender.lifecycle.GpuHold(
            pods::podsOn, nodeNames::kubernetes, clock, metrics::gpuHold, metrics.gpuHoldOverdue());
    routes.allocationHints(
        new io.kse.extender.http.AllocationHintRoute(
            hints,
            (job, node) -> pods.synced() ? Optional.of(gpuHold.ask(job, node)) : Optional.empty(),
            cfg.allocationHint().token(),
            metrics,
            isWriter,
            () -> Optional.ofNullable(lease.get()).flatMap(WriterLease::writerAddress)));
  }

  /** The DRA capacity a GPU share is counted in (the policy's cluster.gpuShares, or "shares"). */
  private String shareCapacity() {
    return policy.policy().cluster().gpuShares().map(GpuShares::capacity).orElse("shares");
  }

  /** Says, once at start, if the cluster is older than the project's floor (never fatal). */
  private void checkKubernetesFloor() {
    try {
      String version = kube.getKubernetesVersion().getGitVersion();
      io.kse.extender.k8s.KubernetesFloor.below(version)
          .ifPresentOrElse(
              why -> LOG.warn("kubernetes_below_floor version={} why=\"{}\"", version, why),
              () -> LOG.info("kubernetes version={}", version));
    } catch (RuntimeException e) { // the informers will say it louder if the API is unreachable
      LOG.warn("kubernetes_version_unknown error={}", e.toString());
    }
  }

  /** Runs the start steps in order; a failure stops what had started and is thrown. */
  public ExtenderService start() {
    LOG.info(
        "starting version={} scheduler={} policy={} slurm={}",
        BuildInfo.version(),
        cfg.schedulerName(),
        cfg.policyFile(),
        cfg.slurm());
    try {
      step("kubernetes-client", this::checkKubernetesFloor, kube::close);
      step(
          "policy",
          () -> {
            policy.addListener(o -> metrics.policyReload(o.result().name().toLowerCase()));
            metrics.policyRejecting(policy::rejecting);
            policy.watch(cfg.policyReload());
          },
          policy::close);
      step("slurm-client", () -> {}, slurm::close);
      step("slurm-cache", () -> {}, cache::close);
      step("allocation-hints", () -> {}, hints::close);
      // closed after the workers that use them; what is held is said first
      step(
          "pod-actions",
          () -> {},
          () -> {
            actions.flushAll();
            kubeActions.close();
          });
      step("pod-informer", () -> {}, pods::close);
      step("workers", () -> {}, () -> Waits.drain(workers, STOP_STEP));
      step("node-informer", () -> {}, kubeNodes::close);
      step("podgroup-informer", () -> {}, podGroups::close);
      step("reconcile-thread", () -> {}, passes::shutdownNow);
      step("housekeeping", this::schedulePasses, housekeeping::shutdownNow);
      step("node-sync-thread", () -> {}, nodeUpkeep::close);
      step("routes", () -> {}, routes::close); // its verb pools, after both listeners
      step("http", this::listen, () -> {});
      step("connect", this::connectInBackground, () -> {});
      return this;
    } catch (RuntimeException e) {
      close();
      throw e;
    }
  }

  /** The steps that ran, in the order {@link #close} undoes them (newest first). */
  java.util.List<String> stopOrder() {
    return started.names();
  }

  /** The verbs' port. */
  public int port() {
    return port;
  }

  /** The port of /healthz, /readyz, /metrics and /explain. */
  public int opsPort() {
    return opsPort;
  }

  private void step(String name, Runnable start, Runnable stop) {
    started.run(name, start, stop);
  }

  private void schedulePasses() {
    cache.addJobListener(reconciler::onJobChange);
    // level-triggered: besides every pod and job change, every placement is checked periodically,
    // so nothing depends on a change having been seen (kube-scheduler may not call for minutes)
    every("reconcile", RECONCILE_PERIOD, synced, reconciler::reconcileAll);
    // held Events are said when their quiet period is over (a pod that waits hears each step)
    every("event_flush", Duration.ofSeconds(1), () -> true, actions::flush);
    // a charge is saved within a second; a restarted writer restores before its first placement
    every("ledger_save", Duration.ofSeconds(1), synced, savedLedger::tick);
  }

  /** A periodic task that runs only when {@code when} holds and never dies of an exception. */
  private void every(String name, Duration period, BooleanSupplier when, Runnable task) {
    housekeeping.scheduleWithFixedDelay(
        () -> {
          try {
            if (when.getAsBoolean()) {
              task.run();
            }
          } catch (RuntimeException e) {
            LOG.warn("housekeeping_failed task={} error={}", name, e.toString());
          }
        },
        period.toMillis(),
        period.toMillis(),
        TimeUnit.MILLISECONDS);
  }

  private void listen() {
    Vertx vertx = Vertx.vertx();
    this.vertx = vertx;
    started.ran("vertx", () -> await(vertx.close()));
    HttpServer ops = await(routes.listenOps(vertx, cfg.http().opsHost(), cfg.http().opsPort()));
    opsPort = ops.actualPort();
    started.ran("ops-listener", () -> await(ops.shutdown(10, TimeUnit.SECONDS)));
    HttpServer verbs = await(routes.listen(vertx, cfg.host(), cfg.port(), cfg.http().tls()));
    port = verbs.actualPort();
    started.ran("verb-listener", () -> await(verbs.shutdown(10, TimeUnit.SECONDS)));
    started.ran("readiness", () -> accepting.set(false)); // first: stop being ready
    LOG.info(
        "listening host={} port={} tls={} opsHost={} opsPort={}",
        cfg.host(),
        port,
        cfg.http().tls().isPresent(),
        cfg.http().opsHost(),
        opsPort);
  }

  /**
   * Slurm may not be reachable yet: keep trying in the background; health stays up, ready does not.
   * A failure that can never heal exits the process with one line.
   */
  private void connectInBackground() {
    DaemonThreads.named("kse-slurm-connect")
        .newThread(
            () -> {
              try {
                connect();
              } catch (RuntimeException | Error e) {
                // a service that can never become ready must not look alive: exit, the kubelet
                // restarts it and the operator sees the one line why
                LOG.error("startup_failed phase=connect error={}", e.toString(), e);
                System.err.println(
                    "kse-scheduler-extender: cannot start: " + BuildInfo.rootCause(e));
                System.exit(1);
              }
            })
        .start();
  }

  private void connect() {
    warmUp();
    slurm.connectUntil(
        () -> SlurmClients.connect(cfg.slurm(), prometheus),
        cfg.slurm().url().toString(),
        stopped::get);
    if (stopped.get()) {
      return; // stopped before Slurm answered: start nothing more
    }
    // before anything reads Slurm's jobs: which placeholders are ours
    cache.owner(PlaceholderOwnership.resolve(cluster, kube, cfg));
    cache.start();
    if (cfg.podGroups()) { // before the pods, so a gang's size is known when its pods arrive
      podGroups.start(reconciler::onPodGroup);
    }
    var wokenPods =
        new io.kse.extender.lifecycle.WokenPodHints(cache::worthLookingFor, hints::allocated);
    pods.start(
        pod -> {
          wokenPods.accept(pod);
          reconciler.onPod(pod);
        },
        reconciler::onPodDeleted);
    Waits.until(
        synced,
        syncLimit(cfg.slurm().cadence().listingTimeout()),
        () -> "synced (Slurm cache: " + cache.synced() + ", pod informer: " + pods.synced() + ")");
    LOG.info("synced slurmJobs={} pods={}", cache.snapshot().jobs().size(), pods.pods().size());
    becomeWriter();
    nodeUpkeep.start(cache::addNodeListener, housekeeping, RECONCILE_PERIOD);
  }

  /** Runs the hot paths before this replica says ready (a standby too: it may take over). */
  private void warmUp() {
    WarmUp.beforeReady(
        kube.getKubernetesSerialization(),
        cfg.warmUpRounds(),
        policy::placement,
        cfg.http().tls().isPresent()
            ? java.util.Optional.empty()
            : java.util.Optional.of(WarmUp.self(cfg.host(), port)),
        WarmUp.self(cfg.http().opsHost(), opsPort));
    warm.set(true);
  }

  /** The writer converges every placement; with leader election, only the Lease holder. */
  private void becomeWriter() {
    Runnable takeOver =
        () -> {
          // the budgets the previous writer spent, before anything is placed
          savedLedger.takeOver();
          reconciler.takeOver();
        };
    if (!cfg.leaderElection()) {
      takeOver.run();
      return;
    }
    WriterLease l =
        new WriterLease(kube, cfg.leaseNamespace(), cfg.leaseName(), cfg.leaseIdentity(), takeOver);
    lease.set(l);
    started.ran("writer-lease", l::close);
  }

  /** Undoes the steps that ran, newest first; one failing step does not stop the others. */
  @Override
  public void close() {
    if (!stopped.compareAndSet(false, true)) {
      return;
    }
    started.undoAll();
    LOG.info("stopped");
  }

  private static <T> T await(Future<T> f) {
    return Waits.await(f, Duration.ofSeconds(30));
  }
}
