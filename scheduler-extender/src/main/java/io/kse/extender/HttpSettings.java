package io.kse.extender;

import io.kse.extender.http.ExtenderServer;
import io.kse.extender.http.HttpLimits;
import io.kse.extender.http.TlsFiles;
import io.kse.slurm.settings.Setting;
import io.kse.slurm.settings.Settings;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The settings of the two listeners — the verbs (loopback, or TLS with client certificates) and ops
 * — and what any mix of callers may cost them, read together because they are checked together (TLS
 * off loopback, two distinct ports, in-flight bytes above one body).
 */
final class HttpSettings {
  private HttpSettings() {}

  /**
   * @param advertise where other replicas reach this one's ops port (host:port), if known
   */
  record Listeners(String host, int port, ExtenderConfig.Http http, Optional<String> advertise) {}

  static final Setting<String> HTTP_HOST =
      Setting.string(
          "KSE_HTTP_HOST",
          "listen address of the verbs (filter/prioritize/preempt/bind): loopback, as"
              + " kube-scheduler runs in the same pod",
          "127.0.0.1");
  static final Setting<Integer> HTTP_PORT =
      Setting.integer("KSE_HTTP_PORT", "listen port of the verbs", 8888, 1, 65535);
  static final Setting<Optional<Path>> TLS_CERT =
      Setting.path(
          "KSE_HTTP_TLS_CERT_FILE",
          "PEM certificate: serve the verbs over HTTPS (with KSE_HTTP_TLS_KEY_FILE and"
              + " KSE_HTTP_TLS_CLIENT_CA_FILE), for a kube-scheduler that runs apart");
  static final Setting<Optional<Path>> TLS_KEY =
      Setting.path("KSE_HTTP_TLS_KEY_FILE", "PEM private key of KSE_HTTP_TLS_CERT_FILE");
  static final Setting<Optional<Path>> TLS_CLIENT_CA =
      Setting.path(
          "KSE_HTTP_TLS_CLIENT_CA_FILE",
          "PEM CA: only clients with a certificate it signed may call the verbs");
  static final Setting<Boolean> PLAINTEXT =
      Setting.bool(
          "KSE_HTTP_PLAINTEXT_ON_NETWORK",
          "true: allow the verbs on a non-loopback address without TLS, so anyone who reaches the"
              + " port can bind pods",
          false);
  static final Setting<String> OPS_HOST =
      Setting.string(
          "KSE_OPS_HOST", "listen address of /healthz, /readyz, /metrics and /explain", "0.0.0.0");
  static final Setting<Integer> OPS_PORT =
      Setting.integer(
          "KSE_OPS_PORT",
          "listen port of /healthz, /readyz, /metrics and /explain; /explain answers loopback"
              + " callers, others need a token allowed to get the pod",
          8889,
          0,
          65535);
  static final Setting<Long> BODY_LIMIT =
      Setting.number(
          "KSE_HTTP_BODY_LIMIT_BYTES", "largest request body accepted", 8 << 20, 1024, 256 << 20);
  static final Setting<Long> INFLIGHT =
      Setting.number(
          "KSE_HTTP_INFLIGHT_BYTES",
          "request body bytes held at once over all connections; beyond, 503",
          64 << 20,
          1024,
          Integer.MAX_VALUE);
  static final Setting<Integer> MAX_CONNECTIONS =
      Setting.integer(
          "KSE_HTTP_MAX_CONNECTIONS", "open connections; more are closed at once", 256, 1, 65_536);
  static final Setting<Duration> BODY_TIMEOUT =
      Setting.millis(
          "KSE_HTTP_BODY_TIMEOUT_MS",
          "time for a whole request body to arrive; beyond, 408 and the connection closed",
          10_000,
          100,
          600_000);
  static final Setting<Duration> HEAD_TIMEOUT =
      Setting.millis(
          "KSE_HTTP_HEAD_TIMEOUT_MS",
          "a new connection that has not sent a whole request head by then is closed",
          5_000,
          100,
          600_000);
  static final Setting<Duration> IDLE_TIMEOUT =
      Setting.millis(
          "KSE_HTTP_IDLE_TIMEOUT_MS",
          "idle connections are closed after this",
          120_000,
          1000,
          3_600_000);
  static final Setting<Integer> VERB_THREADS =
      Setting.integer(
          "KSE_HTTP_VERB_THREADS",
          "threads computing filter/prioritize/preempt answers, off the event loop",
          2,
          1,
          64);
  static final Setting<Integer> QUEUED_VERBS =
      Setting.integer(
          "KSE_HTTP_QUEUED_VERBS",
          "verb calls waiting for a thread; more are answered 503",
          64,
          1,
          100_000);
  static final Setting<Integer> MIN_NODE_NAMES =
      Setting.integer(
          "KSE_HTTP_MIN_NODE_NAMES",
          "a request may name as many candidate nodes as the cluster has plus 10% and 100, and at"
              + " least this many",
          1000,
          1,
          1_000_000);
  static final Setting<Optional<String>> OPS_ADVERTISE =
      Setting.optional(
          "KSE_OPS_ADVERTISE",
          "host:port where the other replicas reach this one's ops port: a standby forwards Slurm's"
              + " hints there when this replica is the writer (it travels in the writer Lease's"
              + " holder identity)",
          "POD_IP:KSE_OPS_PORT when POD_IP is set, else none (hints are not forwarded)");

  /** Reads and checks them; problems go to {@code r}, as every other setting's. */
  static Listeners read(Settings r, Map<String, String> env) {
    String host = HTTP_HOST.read(r);
    int port = HTTP_PORT.read(r);
    List<Path> tlsFiles =
        List.of(TLS_CERT, TLS_KEY, TLS_CLIENT_CA).stream()
            .map(s -> s.read(r))
            .flatMap(Optional::stream)
            .toList();
    Optional<TlsFiles> tls = Optional.empty();
    if (tlsFiles.size() == 3) {
      TlsFiles t = new TlsFiles(tlsFiles.get(0), tlsFiles.get(1), tlsFiles.get(2));
      t.problems().forEach(r::problem);
      tls = Optional.of(t);
    } else if (!tlsFiles.isEmpty()) {
      r.problem(
          List.of(TLS_CERT.name(), TLS_KEY.name(), TLS_CLIENT_CA.name())
              + ": set all three for HTTPS with client certificates, or none");
    }
    if (tls.isEmpty() && !PLAINTEXT.read(r) && !ExtenderServer.isLoopback(host)) {
      r.problem(
          "KSE_HTTP_HOST="
              + host
              + ": the verbs bind pods; off loopback they need TLS with client certificates"
              + " (KSE_HTTP_TLS_*), or KSE_HTTP_PLAINTEXT_ON_NETWORK=true to accept the risk");
    }
    int opsPort = OPS_PORT.read(r);
    Optional<String> advertise =
        OPS_ADVERTISE
            .read(r)
            .or(
                () ->
                    Optional.ofNullable(env.get("POD_IP"))
                        .filter(ip -> !ip.isBlank())
                        .map(ip -> (ip.contains(":") ? "[" + ip + "]" : ip) + ":" + opsPort));
    advertise
        .filter(a -> !a.matches("(\\[[0-9A-Fa-f:.]+\\]|[A-Za-z0-9.-]{1,253}):[0-9]{1,5}"))
        .ifPresent(
            a ->
                r.problem(
                    "KSE_OPS_ADVERTISE='"
                        + a
                        + "': expected host:port (an IPv6 address in brackets)"));
    if (opsPort != 0 && opsPort == port) {
      r.problem("KSE_OPS_PORT=" + opsPort + ": must differ from KSE_HTTP_PORT");
    }
    HttpLimits limits =
        new HttpLimits(
            BODY_LIMIT.read(r),
            INFLIGHT.read(r),
            MAX_CONNECTIONS.read(r),
            BODY_TIMEOUT.read(r),
            IDLE_TIMEOUT.read(r),
            HEAD_TIMEOUT.read(r),
            VERB_THREADS.read(r),
            QUEUED_VERBS.read(r),
            ExtenderConfig.WORKERS.read(r),
            MIN_NODE_NAMES.read(r));
    if (limits.inFlightBytes() < limits.bodyBytes()) {
      r.problem(
          "KSE_HTTP_INFLIGHT_BYTES="
              + limits.inFlightBytes()
              + ": must be at least KSE_HTTP_BODY_LIMIT_BYTES ("
              + limits.bodyBytes()
              + ")");
    }
    return new Listeners(
        host, port, new ExtenderConfig.Http(OPS_HOST.read(r), opsPort, tls, limits), advertise);
  }
}
