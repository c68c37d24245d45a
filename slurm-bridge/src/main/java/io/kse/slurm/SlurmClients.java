package io.kse.slurm;

import io.kse.slurm.resilience.ResilientSlurmClient;
import io.kse.slurm.rest.RestSlurmClient;
import io.kse.slurm.rest.SlurmHttp;
import io.kse.slurm.rest.TokenSource;
import io.kse.slurm.rest.VersionProbe;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/** Builds the production {@link SlurmClient}: REST, version discovered or pinned, resilient. */
public final class SlurmClients {
  private SlurmClients() {}

  /**
   * Connects to slurmrestd. Discovering the version makes one request per version until one
   * answers, so this throws the usual {@link SlurmException}s when slurmrestd is unreachable or
   * refuses the token.
   */
  public static ResilientSlurmClient connect(SlurmConfig config, MeterRegistry registry) {
    SlurmHttp http = http(config);
    transportMeters(http, registry);
    java.util.function.Function<ApiVersion, SlurmClient> atVersion =
        v -> new RestSlurmClient(http, v, config.cadence().listingTimeout());
    // a pinned version is the operator's choice; a discovered one follows slurmrestd's upgrades
    SlurmClient rest =
        config
            .apiVersion()
            .map(atVersion)
            .orElseGet(
                () ->
                    new io.kse.slurm.rest.RenegotiatingSlurmClient(
                        http, VersionProbe.discover(http), atVersion));
    return new ResilientSlurmClient(rest, config, registry);
  }

  /** What the transport itself exports: bytes read, and when the token in use expires. */
  public static void transportMeters(SlurmHttp http, MeterRegistry registry) {
    io.micrometer.core.instrument.FunctionCounter.builder(
            MetricNames.RESPONSE_BYTES, http, h -> (double) h.receivedBytes())
        .description("Bytes of answers read from slurmrestd (bodies), every call")
        .baseUnit("bytes")
        .register(registry);
    // looked at on every scrape, so a rotated token's expiry shows at once; alerting well before
    // it is the alert's job (KseSlurmTokenExpiresSoon)
    io.micrometer.core.instrument.Gauge.builder(
            MetricNames.TOKEN_EXPIRY,
            http,
            h -> h.tokenExpiry().map(t -> (double) t.getEpochSecond()).orElse(Double.NaN))
        .description(
            "When the Slurm JWT in use expires (its exp claim); NaN: no expiry or unreadable")
        .baseUnit("seconds")
        .register(registry);
  }

  /** The HTTP transport alone, for tools that pick the version themselves. */
  public static SlurmHttp http(SlurmConfig config) {
    TokenSource tokens =
        config
            .tokenFile()
            .map(TokenSource::file)
            .orElseGet(() -> TokenSource.of(config.token().orElseThrow()));
    return new SlurmHttp(
        config.url(),
        config.user(),
        tokens,
        config.connectTimeout(),
        config.requestTimeout(),
        config.caFile().map(SlurmClients::trusting));
  }

  /** An SSL context trusting the PEM certificates in {@code caFile} (and only those). */
  static SSLContext trusting(Path caFile) {
    try (InputStream in = Files.newInputStream(caFile)) {
      KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
      store.load(null, null);
      int i = 0;
      for (Certificate c : CertificateFactory.getInstance("X.509").generateCertificates(in)) {
        store.setCertificateEntry("ca-" + i++, c);
      }
      if (i == 0) {
        throw new IllegalArgumentException("KSE_SLURM_CA_FILE " + caFile + " holds no certificate");
      }
      TrustManagerFactory tmf =
          TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      tmf.init(store);
      SSLContext ctx = SSLContext.getInstance("TLS");
      ctx.init(null, tmf.getTrustManagers(), null);
      return ctx;
    } catch (IOException | GeneralSecurityException e) {
      throw new IllegalArgumentException(
          "cannot load CA file " + caFile + ": " + e.getMessage(), e);
    }
  }
}
