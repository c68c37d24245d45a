package io.kse.policy.load;

import io.kse.policy.PlacementPolicy;
import io.kse.policy.PolicyParser;
import io.kse.policy.PolicyValidationException;
import io.kse.policy.model.Policy;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The policy in force, read from a file (a mounted ConfigMap) and reloaded when its content
 * changes. A new file that does not validate is refused: the last good policy stays in force and
 * the outcome says why. Content is compared by digest, because ConfigMap updates swap symlinks,
 * which file watchers miss.
 */
public final class PolicyStore implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(PolicyStore.class);

  /** The result of one reload attempt. */
  public record Outcome(Result result, String digest, Optional<String> error) {
    public enum Result {
      APPLIED,
      UNCHANGED,
      REJECTED
    }
  }

  private final Path file;
  private final List<Consumer<Outcome>> listeners = new CopyOnWriteArrayList<>();
  private volatile PlacementPolicy current;
  private volatile String digest;
  private String rejected;
  private ScheduledExecutorService watcher;

  /** Loads the file; a first policy that does not validate is fatal (nothing to fall back to). */
  public PolicyStore(Path file) {
    this.file = file;
    String text = read();
    this.current = new PlacementPolicy(PolicyParser.parse(text, file.toString()));
    this.digest = digest(text);
    LOG.info(
        "policy_loaded file={} digest={} tiers={}", file, digest, current.policy().tiers().size());
  }

  public PlacementPolicy placement() {
    return current;
  }

  public Policy policy() {
    return current.policy();
  }

  public String digest() {
    return digest;
  }

  /** Called after every reload attempt that found new content (applied or rejected). */
  public void addListener(Consumer<Outcome> l) {
    listeners.add(l);
  }

  /**
   * Whether the file as last read was refused: the policy in force is an older one, until the file
   * is fixed (or put back as it was).
   */
  public synchronized boolean rejecting() {
    return rejected != null;
  }

  /** Re-reads the file now. */
  public synchronized Outcome reload() {
    String text;
    try {
      text = read();
    } catch (IllegalArgumentException e) {
      return reject("?", e.getMessage());
    }
    String d = digest(text);
    if (d.equals(digest)) {
      rejected = null;
      return new Outcome(Outcome.Result.UNCHANGED, d, Optional.empty());
    }
    try {
      current = new PlacementPolicy(PolicyParser.parse(text, file.toString()));
    } catch (PolicyValidationException e) {
      return reject(d, e.getMessage());
    }
    String old = digest;
    digest = d;
    rejected = null;
    LOG.info(
        "policy_reloaded file={} digest={} previous={} tiers={}",
        file,
        d,
        old,
        current.policy().tiers().size());
    return notify(new Outcome(Outcome.Result.APPLIED, d, Optional.empty()));
  }

  private Outcome reject(String d, String why) {
    if ((d + why).equals(rejected)) { // the same bad file, polled again: said once already
      return new Outcome(Outcome.Result.REJECTED, d, Optional.of(why));
    }
    rejected = d + why;
    LOG.warn(
        "policy_reload_rejected file={} digest={} keptDigest={} reason={}",
        file,
        d,
        digest,
        why.replace('\n', ' '));
    return notify(new Outcome(Outcome.Result.REJECTED, d, Optional.of(why)));
  }

  private Outcome notify(Outcome o) {
    listeners.forEach(l -> l.accept(o));
    return o;
  }

  /** Checks the file every {@code interval} in the background. */
  public synchronized void watch(Duration interval) {
    if (watcher != null) {
      return;
    }
    watcher =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "kse-policy-watch");
              t.setDaemon(true);
              return t;
            });
    watcher.scheduleWithFixedDelay(
        () -> {
          try {
            reload();
          } catch (RuntimeException e) {
            LOG.error("policy_watch_failed file={}", file, e);
          }
        },
        interval.toMillis(),
        interval.toMillis(),
        TimeUnit.MILLISECONDS);
  }

  @Override
  public synchronized void close() {
    if (watcher != null) {
      watcher.shutdownNow();
    }
  }

  private String read() {
    return PolicyFile.read(file);
  }

  private static String digest(String text) {
    try {
      byte[] h = MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
      return HexFormat.of().formatHex(h, 0, 8);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
