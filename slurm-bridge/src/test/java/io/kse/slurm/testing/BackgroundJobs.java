package io.kse.slurm.testing;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Other users' work on the scale rig: root's external jobs in the {@code external} partition (26.05
 * runs them on nodes made {@code state=external}, no slurmd), training-shaped — 1 to 64 nodes of 8
 * GPUs, time limits of hours, niceness spread so priorities differ — kept at a queue size while a
 * churn cancels {@code churnPerSecond} of them a second and submits as many: Slurm starts some,
 * others wait with changing reasons, as on a busy cluster. Through slurmrestd with root's token, as
 * a portal would submit.
 */
public final class BackgroundJobs implements AutoCloseable {
  private static final Pattern JOB_ID = Pattern.compile("\"job_id\"\\s*:\\s*(\\d+)");

  private final java.util.function.Consumer<List<Long>> cancel;
  private final HttpClient http =
      HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
  private final String base;
  private final String token;
  private final Random random = new Random(28);
  private final List<Long> ids = java.util.Collections.synchronizedList(new ArrayList<>());
  private final AtomicLong submitted = new AtomicLong();
  private final AtomicLong failed = new AtomicLong();
  private final ScheduledExecutorService churn = Executors.newSingleThreadScheduledExecutor();

  /** Eligible jobs submitted before the held ones: enough to keep the nodes busy. */
  static final int LIVE = 1000;

  /**
   * @param restUrl slurmrestd (26.05: v0.0.45) of a cluster whose {@code external} partition holds
   *     external nodes ({@code testing/slurm/slurm-cluster --external-nodes})
   * @param rootToken a file holding root's JWT
   * @param cancel cancels jobs in bulk at the end (scancel: one RPC per 200)
   */
  public BackgroundJobs(
      String restUrl, Path rootToken, java.util.function.Consumer<List<Long>> cancel)
      throws java.io.IOException {
    this.cancel = cancel;
    this.base = restUrl + "/slurm/v0.0.45";
    this.token = Files.readString(rootToken).trim();
  }

  public int size() {
    return ids.size();
  }

  public long failures() {
    return failed.get();
  }

  /** Submits until {@code queue} jobs are held, six requests at a time. */
  public void fillTo(int queue) throws InterruptedException {
    ExecutorService pool = Executors.newFixedThreadPool(6);
    int want = queue - ids.size();
    for (int i = 0; i < want; i++) {
      boolean held = ids.size() + i >= LIVE;
      pool.execute(() -> submitOne(held));
    }
    pool.shutdown();
    pool.awaitTermination(2, TimeUnit.HOURS);
  }

  /** From now on, every second: {@code perSecond} random jobs cancelled, as many submitted. */
  public void churn(int perSecond) {
    churn.scheduleAtFixedRate(
        () -> {
          try {
            for (int i = 0; i < perSecond && !ids.isEmpty(); i++) {
              long id = ids.remove(random.nextInt(ids.size()));
              send("DELETE", "/job/" + id, null);
              submitOne(false);
            }
          } catch (RuntimeException e) {
            failed.incrementAndGet();
          }
        },
        1,
        1,
        TimeUnit.SECONDS);
  }

  private void submitOne(boolean held) {
    int nodes;
    synchronized (random) {
      int r = random.nextInt(100);
      nodes =
          r < 50
              ? 1 + random.nextInt(4)
              : r < 85 ? 8 * (1 + random.nextInt(2)) : 32 * (1 + random.nextInt(2));
    }
    int minutes = 60 + (int) (submitted.get() % 600);
    int nice = (int) (submitted.get() * 7 % 1000);
    String body =
        "{\"job\":{\"name\":\"train-"
            + submitted.incrementAndGet()
            + "\",\"partition\":\"external\",\"nodes\":\""
            + nodes
            + "\",\"tasks\":"
            + nodes
            + ",\"tasks_per_node\":1,\"cpus_per_task\":1,\"tres_per_node\":\"gres/gpu:8\","
            + "\"time_limit\":{\"set\":true,\"infinite\":false,\"number\":"
            + minutes
            + "},\"nice\":"
            + nice
            + (held ? ",\"hold\":true" : "")
            + ",\"flags\":[\"EXTERNAL_JOB\"],\"current_working_directory\":\"/tmp\","
            + "\"environment\":[\"PATH=/usr/bin:/bin\"]}}";
    String answer = send("POST", "/job/submit", body);
    Matcher m = JOB_ID.matcher(answer);
    if (m.find()) {
      ids.add(Long.parseLong(m.group(1)));
    } else {
      failed.incrementAndGet();
    }
  }

  private String send(String method, String path, String body) {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create(base + path))
            .header("X-SLURM-USER-NAME", "root")
            .header("X-SLURM-USER-TOKEN", token)
            .header("Content-Type", "application/json");
    b.method(
        method,
        body == null
            ? HttpRequest.BodyPublishers.noBody()
            : HttpRequest.BodyPublishers.ofString(body));
    try {
      return http.send(b.build(), HttpResponse.BodyHandlers.ofString()).body();
    } catch (Exception e) {
      failed.incrementAndGet();
      return "";
    }
  }

  @Override
  public void close() {
    churn.shutdownNow();
    List<Long> all;
    synchronized (ids) {
      all = new ArrayList<>(ids);
    }
    cancel.accept(all);
  }
}
