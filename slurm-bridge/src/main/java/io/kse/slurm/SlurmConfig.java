package io.kse.slurm;

import io.kse.slurm.settings.Setting;
import io.kse.slurm.settings.Settings;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * How to reach slurmrestd and how hard to try. Built from {@code KSE_SLURM_*} variables by {@link
 * #fromEnv}, which checks every variable and reports every problem at once.
 *
 * @param url slurmrestd base URL, e.g. {@code http://slurmrestd:6820}
 * @param user value of {@code X-SLURM-USER-NAME}; empty to take it from the JWT's {@code sun}
 * @param tokenFile file holding the JWT, re-read when it changes (preferred: a mounted Secret)
 * @param token the JWT itself (when no file is given)
 * @param apiVersion pinned API version; empty to discover the newest the server offers
 * @param caFile PEM CA certificate to trust for an https URL; empty for the JDK's trust store
 * @param cadence how often the state cache looks at our jobs, the nodes and the whole job table
 */
public record SlurmConfig(
    URI url,
    Optional<String> user,
    Optional<Path> tokenFile,
    Optional<String> token,
    Optional<ApiVersion> apiVersion,
    Duration connectTimeout,
    Duration requestTimeout,
    int maxInFlight,
    int retryAttempts,
    Duration retryBackoff,
    Duration circuitOpenFor,
    Optional<Path> caFile,
    StateCadence cadence) {

  static final Setting<URI> URL =
      new Setting<>(
          "KSE_SLURM_URL",
          "slurmrestd base URL (required), e.g. http://slurmrestd:6820",
          "",
          s -> s.required("KSE_SLURM_URL", SlurmConfig::parseUrl));
  static final Setting<Optional<String>> USER =
      Setting.optional("KSE_SLURM_USER", "X-SLURM-USER-NAME header", "the JWT's user (sun claim)");
  static final Setting<Optional<Path>> JWT_FILE =
      Setting.path("KSE_SLURM_JWT_FILE", "file with the JWT, re-read when it changes");
  static final Setting<Optional<String>> JWT =
      Setting.optional("KSE_SLURM_JWT", "the JWT itself, when no file is used", "");
  static final Setting<Optional<ApiVersion>> API_VERSION =
      new Setting<>(
          "KSE_SLURM_API_VERSION",
          "pin v0.0.38 or v0.0.41..v0.0.45",
          "discover",
          s -> s.optional("KSE_SLURM_API_VERSION", ApiVersion::parse));
  static final Setting<Duration> CONNECT_TIMEOUT =
      Setting.millis("KSE_SLURM_CONNECT_TIMEOUT_MS", "TCP connect timeout", 2000);
  static final Setting<Duration> TIMEOUT =
      Setting.millis("KSE_SLURM_TIMEOUT_MS", "whole-request timeout", 5000);
  static final Setting<Integer> MAX_IN_FLIGHT =
      Setting.positive("KSE_SLURM_MAX_IN_FLIGHT", "calls allowed at once; more fail fast", 32);
  static final Setting<Integer> RETRY_ATTEMPTS =
      Setting.positive("KSE_SLURM_RETRY_ATTEMPTS", "attempts for idempotent calls", 3);
  static final Setting<Duration> RETRY_BACKOFF =
      Setting.millis("KSE_SLURM_RETRY_BACKOFF_MS", "first retry delay, doubled each time", 200);
  static final Setting<Duration> CIRCUIT_OPEN =
      Setting.millis("KSE_SLURM_CIRCUIT_OPEN_MS", "how long an open circuit rejects calls", 5000);
  static final Setting<Optional<Path>> CA_FILE =
      Setting.path("KSE_SLURM_CA_FILE", "PEM CA certificate for an https URL");
  static final Setting<Duration> POLL_INTERVAL =
      Setting.millis(
          "KSE_SLURM_POLL_INTERVAL_MS",
          "one cache pass: states of our live placeholders, reads of those that changed or pend",
          500);
  static final Setting<Duration> RUNNING_READ =
      Setting.millis(
          "KSE_SLURM_RUNNING_READ_MS",
          "a running placeholder is read in full this often (chosen for preemption?)",
          5000);
  static final Setting<Duration> NODE_INTERVAL =
      Setting.millis(
          "KSE_SLURM_NODE_INTERVAL_MS",
          "the node table this often (drains, downs and features; tens of MB at 10,000 nodes);"
              + " 300000 where Slurm's node triggers call the hook (docs/install.md)",
          30000);
  static final Setting<Duration> RESYNC_INTERVAL =
      Setting.millis(
          "KSE_SLURM_RESYNC_INTERVAL_MS",
          "safety net: slurmctld's whole job table this often (orphans, lost hooks)",
          300000);
  static final Setting<Integer> MAX_READS =
      Setting.positive(
          "KSE_SLURM_MAX_READS_PER_POLL", "single-job reads per cache pass; more wait a pass", 32);

  /** Every setting of the bridge, in the order the docs list them. */
  static final java.util.List<Setting<?>> SETTINGS =
      java.util.List.of(
          URL,
          USER,
          JWT_FILE,
          JWT,
          API_VERSION,
          CONNECT_TIMEOUT,
          TIMEOUT,
          MAX_IN_FLIGHT,
          RETRY_ATTEMPTS,
          RETRY_BACKOFF,
          CIRCUIT_OPEN,
          CA_FILE,
          POLL_INTERVAL,
          RUNNING_READ,
          NODE_INTERVAL,
          RESYNC_INTERVAL,
          MAX_READS);

  /** Every variable this record reads, with its one line of documentation (docs and errors). */
  public static final Map<String, String> VARIABLES = docs();

  private static Map<String, String> docs() {
    Map<String, String> v = new LinkedHashMap<>();
    SETTINGS.forEach(x -> v.put(x.name(), x.doc()));
    return java.util.Collections.unmodifiableMap(v);
  }

  public SlurmConfig {
    if (tokenFile.isEmpty() && token.isEmpty()) {
      throw new IllegalArgumentException(
          "a JWT is required: set KSE_SLURM_JWT_FILE or KSE_SLURM_JWT");
    }
  }

  /** Reads the {@code KSE_SLURM_*} variables of {@code env}; other variables are ignored. */
  public static SlurmConfig fromEnv(Map<String, String> env) {
    Settings settings = new Settings(env).refuseUnknown("KSE_SLURM_", VARIABLES.keySet());
    SlurmConfig c = read(settings);
    settings.throwIfAny("invalid Slurm settings");
    return c;
  }

  /**
   * Reads the {@code KSE_SLURM_*} settings into {@code settings}' problem list (the extender reads
   * its own and these into one); null when any is wrong.
   */
  public static SlurmConfig read(Settings r) {
    int before = r.problems().size();
    URI url = URL.read(r);
    Optional<Path> tokenFile = JWT_FILE.read(r);
    Optional<String> token = JWT.read(r);
    if (tokenFile.isEmpty() && token.isEmpty()) {
      r.problem("KSE_SLURM_JWT_FILE or KSE_SLURM_JWT: one is required");
    }
    Optional<String> user = USER.read(r);
    Optional<ApiVersion> version = API_VERSION.read(r);
    Duration connect = CONNECT_TIMEOUT.read(r);
    Duration request = TIMEOUT.read(r);
    int inFlight = MAX_IN_FLIGHT.read(r);
    int attempts = RETRY_ATTEMPTS.read(r);
    Duration backoff = RETRY_BACKOFF.read(r);
    Duration open = CIRCUIT_OPEN.read(r);
    Optional<Path> ca = CA_FILE.read(r);
    // a bad CA file is a configuration error, said at start, not a connector thread dying later
    ca.ifPresent(
        f -> {
          try {
            SlurmClients.trusting(f);
          } catch (IllegalArgumentException e) {
            r.problem("KSE_SLURM_CA_FILE=" + f + ": " + e.getMessage());
          }
        });
    StateCadence cadence =
        StateCadence.of(
            POLL_INTERVAL.read(r),
            RUNNING_READ.read(r),
            NODE_INTERVAL.read(r),
            RESYNC_INTERVAL.read(r),
            MAX_READS.read(r));
    if (r.problems().size() > before) {
      return null;
    }
    return new SlurmConfig(
        url, user, tokenFile, token, version, connect, request, inFlight, attempts, backoff, open,
        ca, cadence);
  }

  /**
   * The Slurm user our requests run as, so the user who submits every placeholder: {@code
   * KSE_SLURM_USER}, else the user the JWT was minted for (its {@code sun} claim); empty when
   * neither says (an unreadable token file).
   */
  public Optional<String> submittingUser() {
    if (user.isPresent()) {
      return user;
    }
    Optional<String> jwt = token;
    if (tokenFile.isPresent()) {
      try {
        jwt = Optional.of(java.nio.file.Files.readString(tokenFile.get()).trim());
      } catch (java.io.IOException | RuntimeException e) {
        return Optional.empty();
      }
    }
    return jwt.flatMap(io.kse.slurm.rest.Jwt::user);
  }

  /** A config with defaults for everything but the URL and token, for tests and tools. */
  public static SlurmConfig of(URI url, Optional<String> user, Path tokenFile) {
    return new SlurmConfig(
        url,
        user,
        Optional.of(tokenFile),
        Optional.empty(),
        Optional.empty(),
        Duration.ofSeconds(2),
        Duration.ofSeconds(5),
        32,
        3,
        Duration.ofMillis(200),
        Duration.ofSeconds(5),
        Optional.empty(),
        StateCadence.of(
            Duration.ofMillis(500),
            Duration.ofSeconds(5),
            Duration.ofSeconds(30),
            Duration.ofMinutes(5),
            32));
  }

  public SlurmConfig withApiVersion(ApiVersion v) {
    return copy(f -> f.apiVersion = Optional.of(v));
  }

  public SlurmConfig withTimeouts(Duration connect, Duration request) {
    return copy(
        f -> {
          f.connectTimeout = connect;
          f.requestTimeout = request;
        });
  }

  public SlurmConfig withCircuitOpenFor(Duration open) {
    return copy(f -> f.circuitOpenFor = open);
  }

  /** The fields, mutable, so the withers above change one thing and copy the rest. */
  private static final class Fields {
    Optional<ApiVersion> apiVersion;
    Duration connectTimeout;
    Duration requestTimeout;
    Duration circuitOpenFor;
  }

  private SlurmConfig copy(java.util.function.Consumer<Fields> change) {
    Fields f = new Fields();
    f.apiVersion = apiVersion;
    f.connectTimeout = connectTimeout;
    f.requestTimeout = requestTimeout;
    f.circuitOpenFor = circuitOpenFor;
    change.accept(f);
    return new SlurmConfig(
        url,
        user,
        tokenFile,
        token,
        f.apiVersion,
        f.connectTimeout,
        f.requestTimeout,
        maxInFlight,
        retryAttempts,
        retryBackoff,
        f.circuitOpenFor,
        caFile,
        cadence);
  }

  /** Never prints the token. */
  @Override
  public String toString() {
    return "SlurmConfig[url="
        + url
        + ", user="
        + user.orElse("(from JWT)")
        + ", token="
        + tokenFile.map(p -> "file " + p).orElse(token.isPresent() ? "(inline, hidden)" : "none")
        + ", apiVersion="
        + apiVersion.map(ApiVersion::id).orElse("discover")
        + ", timeout="
        + requestTimeout.toMillis()
        + "ms, maxInFlight="
        + maxInFlight
        + ", retryAttempts="
        + retryAttempts
        + ", poll="
        + cadence.poll().toMillis()
        + "ms, safetyNet="
        + cadence.safetyNet().toSeconds()
        + "s]";
  }

  private static URI parseUrl(String s) {
    URI u = URI.create(s.trim());
    if (!"http".equals(u.getScheme()) && !"https".equals(u.getScheme()) || u.getHost() == null) {
      throw new IllegalArgumentException("expected an http:// or https:// URL with a host");
    }
    return u;
  }
}
