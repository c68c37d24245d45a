package io.kse.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.Test;

/**
 * Issue 29: a seeded random schedule of ordinary operations and faults ({@link SoakSchedule}) while
 * a checker ({@link SoakChecker}) holds the extender's promises against the Kubernetes API and
 * Slurm's own {@code squeue} every second. Fails on any violation, and on any ERROR the extender
 * logged. {@code KSE_SOAK_MINUTES} (default 3) and {@code KSE_SOAK_SEED} (default 1); {@code ./kse
 * soak} runs it alone. The report goes to {@code e2e/target/soak/} and stdout.
 */
class SoakE2E extends Scenario {
  private static final Duration QUIET = Duration.ofSeconds(90);

  @Test
  void aSeededScheduleOfOrdinaryChaosBreaksNoPromise() throws Exception {
    assumeTrue(stack.managed(), "stops and starts Slurm's daemons and the extender of the stack");
    double minutes = Double.parseDouble(env("KSE_SOAK_MINUTES", "3"));
    long seed = Long.parseLong(env("KSE_SOAK_SEED", "1"));
    SoakSchedule[] schedule = new SoakSchedule[1];
    // external placeholders run no Epilog: nothing holds their nodes once they end
    boolean held = !"external".equals(env("KSE_E2E_SHAPE", "batch"));
    // a stack with Slurm shards (e2e/cluster/stack --gpu-shards N) soaks shared GPUs too
    int shards = Integer.parseInt(stack.envIfSet("KSE_LAB_GPU_SHARDS").orElse("0"));
    SoakChecker checker = new SoakChecker(Set.of(ns), () -> schedule[0].recent(12), held, shards);
    // two replicas unless KSE_SOAK_REPLICAS=1: fail-overs happen
    boolean twoReplicas = !"1".equals(env("KSE_SOAK_REPLICAS", "2"));
    schedule[0] = new SoakSchedule(stack, ns, checker, seed, twoReplicas, shards);
    Map<Path, Long> logsFrom = new LinkedHashMap<>();
    for (String log : List.of("extender.log", "extender-b.log")) {
      Path f = stack.logDir().resolve(log);
      logsFrom.put(f, Files.exists(f) ? Files.size(f) : 0);
    }
    Instant began = Instant.now();
    Path slurmctldLog = Path.of(stack.slurmCluster().env("KSE_LAB_DIR"), "log", "slurmctld.log");
    long slurmctldLogFrom = SlurmPreemptions.end(slurmctldLog);
    System.out.printf(
        "[soak] seed %d, %.1f minutes, %d extender replica(s), %d shards per GPU%n",
        seed, minutes, twoReplicas ? 2 : 1, shards);

    VerbErrors verbErrors = new VerbErrors();
    ScheduledExecutorService checks = Executors.newSingleThreadScheduledExecutor();
    int[] tick = {0};
    checks.scheduleWithFixedDelay(
        () -> {
          try {
            schedule[0].releaseStopped(SoakSchedule.SLOW_STOP);
            if (tick[0]++ % 10 == 0) {
              checker.charged(chargesSince(began)); // Events live an hour: gather them as we go
            }
            checker.tick(
                Instant.now(),
                pods(),
                SoakChecker.claimedGpus(
                    kube.resources(ResourceClaim.class).inNamespace(ns).list().getItems()),
                SlurmTruth.read(stack.slurmCluster()));
            for (String replica : twoReplicas ? E2eStack.REPLICAS : List.of("")) {
              stack.extenderMetrics(replica).ifPresent(m -> verbErrors.sample(replica, m));
            }
          } catch (RuntimeException e) {
            System.out.println("[soak] check skipped: " + e);
          }
        },
        1,
        1,
        TimeUnit.SECONDS);
    try {
      schedule[0].setUp();
      schedule[0].run(began.plusMillis((long) (minutes * 60_000)));
      Instant quietFrom = Instant.now();
      try {
        // quiet: every finding cleared, and every waiting pod told why (a pod made while the
        // extender was down hears it a pass or two after the restart)
        await("every finding cleared and every waiting pod told why")
            .atMost(QUIET)
            .pollInterval(Duration.ofSeconds(1))
            .until(
                () ->
                    checker.settled()
                        && SoakChecker.silentWaitingPods(pods(), Set.of(ns)).isEmpty());
      } catch (ConditionTimeoutException e) {
        // what is still open is reported as a violation by the final check
      }
      Duration quieted = Duration.between(quietFrom, Instant.now());
      checks.shutdown();
      checks.awaitTermination(30, TimeUnit.SECONDS);
      checker.finalCheck(Instant.now(), pods());
      checker.charged(chargesSince(began));
      checker.ledgerCheck(Instant.now(), SlurmPreemptions.since(slurmctldLog, slurmctldLogFrom));
      List<String> errors = new ArrayList<>();
      for (Map.Entry<Path, Long> log : logsFrom.entrySet()) {
        errors.addAll(errorsLogged(log.getKey(), log.getValue()));
      }
      String report =
          report(seed, minutes, began, quieted, schedule[0], checker, errors)
              + String.format(
                  "%n## Answers to kube-scheduler%n%n5xx (internal error or busy) from %d extender"
                      + " replica(s), counted across their restarts: %d%n",
                  twoReplicas ? 2 : 1, verbErrors.total());
      System.out.println(report);
      Path dir = Path.of("target", "soak");
      Files.createDirectories(dir);
      Files.writeString(dir.resolve("report-seed-" + seed + ".md"), report);
      Files.write(dir.resolve("actions-seed-" + seed + ".log"), schedule[0].log());
      assertThat(checker.violations()).as("violations (report above)").isEmpty();
      assertThat(errors).as("ERRORs the extender logged").isEmpty();
      assertThat(verbErrors.total()).as("5xx answers to kube-scheduler").isZero();
    } finally {
      checks.shutdownNow();
      schedule[0].cancelJobs();
      schedule[0].tearDown();
    }
  }

  /**
   * The preemptions the extender charged since {@code since}: each PreemptedSlurmJob Event of the
   * namespace (by pod), and each charge the writer saved in the preemption ledger's ConfigMap.
   */
  private List<SoakChecker.Charge> chargesSince(Instant since) {
    List<SoakChecker.Charge> out = new ArrayList<>();
    for (Event e : kube.v1().events().inNamespace(ns).list().getItems()) {
      if ("PreemptedSlurmJob".equals(e.getReason())) {
        out.add(
            new SoakChecker.Charge(
                PreemptionE2E.victimOf(e.getMessage()),
                "event " + e.getInvolvedObject().getName()));
      }
    }
    ConfigMap saved =
        kube.configMaps()
            .inNamespace("kube-slurm-extender")
            .withName("kube-slurm-extender-preemptions")
            .get();
    String json =
        saved == null || saved.getData() == null ? null : saved.getData().get("charges.json");
    if (json != null) {
      try {
        for (JsonNode c : new ObjectMapper().readTree(json)) {
          if (!Instant.parse(c.get("at").asText()).isBefore(since)) {
            out.add(
                new SoakChecker.Charge(
                    c.get("victimJob").asLong(), "ledger run " + c.path("victimRun").asInt()));
          }
        }
      } catch (IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
    }
    return out;
  }

  private static String env(String key, String otherwise) {
    return Optional.ofNullable(System.getenv(key)).filter(v -> !v.isBlank()).orElse(otherwise);
  }

  /** The extender's ERROR lines written since {@code from} (the file grows across restarts). */
  private static List<String> errorsLogged(Path log, long from) throws IOException {
    List<String> out = new ArrayList<>();
    if (!Files.exists(log)) {
      return out;
    }
    try (RandomAccessFile f = new RandomAccessFile(log.toFile(), "r")) {
      f.seek(Math.min(from, f.length()));
      byte[] rest = new byte[(int) (f.length() - f.getFilePointer())];
      f.readFully(rest);
      new String(rest, StandardCharsets.UTF_8)
          .lines()
          .filter(l -> l.contains(" ERROR "))
          .forEach(out::add);
    }
    return out;
  }

  private static String report(
      long seed,
      double minutes,
      Instant began,
      Duration quieted,
      SoakSchedule schedule,
      SoakChecker checker,
      List<String> errors) {
    StringBuilder r = new StringBuilder();
    r.append("# Soak report\n\n");
    r.append(
        String.format(
            "seed %d, %.1f minutes of schedule from %s, Slurm %s, %s placeholders; quiet after %d"
                + " s%n%n",
            seed,
            minutes,
            began,
            env("KSE_E2E_SLURM_VERSION", "22.05"),
            env("KSE_E2E_SHAPE", "batch"),
            quieted.toSeconds()));
    r.append("## Actions\n\n| action | count |\n| --- | --- |\n");
    schedule.counts().entrySet().stream()
        .sorted(Map.Entry.comparingByKey())
        .forEach(
            e ->
                r.append("| ")
                    .append(e.getKey())
                    .append(" | ")
                    .append(e.getValue())
                    .append(" |\n"));
    r.append(
        String.format(
            "%nChecks: %d, one a second (Slurm unreadable in %d: slurmctld restarting); bound pods"
                + " checked %d, placeholders checked %d, allocated GPU claims checked %d, of them"
                + " shares of a GPU %d (summed over the checks; %d shards per GPU)%n%n",
            checker.ticks(),
            checker.slurmUnreadable(),
            checker.boundPodsChecked(),
            checker.placeholdersChecked(),
            checker.claimsChecked(),
            checker.shareClaimsChecked(),
            checker.shardsPerGpu()));
    r.append(
        String.format(
            "Preemptions Slurm recorded for our placeholders (slurmctld.log): %s%n%n",
            checker.preemptionsJudged()));
    r.append("## Convergence: how long each finding lasted before it cleared\n\n");
    r.append("| invariant | bound | findings cleared | p50 ms | p95 ms | max ms |\n");
    r.append("| --- | --- | --- | --- | --- | --- |\n");
    Map<SoakChecker.Invariant, List<Long>> converged = checker.convergedMs();
    for (SoakChecker.Invariant inv : SoakChecker.Invariant.values()) {
      List<Long> ms = converged.getOrDefault(inv, List.of()).stream().sorted().toList();
      r.append(
          String.format(
              "| %s | %d s | %d | %s | %s | %s |%n",
              inv,
              checker.bound(inv).toSeconds(),
              ms.size(),
              pct(ms, 50),
              pct(ms, 95),
              ms.isEmpty() ? "-" : ms.get(ms.size() - 1)));
    }
    r.append("\n## Violations\n\n");
    if (checker.violations().isEmpty()) {
      r.append("none\n");
    }
    for (SoakChecker.Violation v : checker.violations()) {
      r.append("- **")
          .append(v.finding().invariant())
          .append("** ")
          .append(v.finding().key())
          .append(": first seen ")
          .append(v.firstSeen())
          .append(", still at ")
          .append(v.at())
          .append("\n  ")
          .append(v.finding().evidence())
          .append("\n  recent actions: ")
          .append(String.join(" · ", v.recentActions()))
          .append('\n');
    }
    r.append("\n## ERRORs the extender logged\n\n");
    r.append(errors.isEmpty() ? "none\n" : String.join("\n", errors) + "\n");
    return r.toString();
  }

  private static String pct(List<Long> sorted, int p) {
    if (sorted.isEmpty()) {
      return "-";
    }
    int i = (int) Math.ceil(p / 100.0 * sorted.size()) - 1;
    return Long.toString(sorted.get(Math.max(0, i)));
  }
}
