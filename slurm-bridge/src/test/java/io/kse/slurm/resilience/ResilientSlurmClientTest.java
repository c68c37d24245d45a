package io.kse.slurm.resilience;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.kse.slurm.JobSubmission;
import io.kse.slurm.PlaceholderTag;
import io.kse.slurm.SlurmConfig;
import io.kse.slurm.SlurmRejectedException;
import io.kse.slurm.SlurmUnavailableException;
import io.kse.slurm.testing.FakeSlurmClient;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.URI;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class ResilientSlurmClientTest {
  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final SlurmConfig config =
      SlurmConfig.of(URI.create("http://x:1"), Optional.empty(), Path.of("/dev/null"))
          .withCircuitOpenFor(Duration.ofMinutes(1));

  /** Counts calls and fails the first {@code failures} of them. */
  static final class Flaky extends io.kse.slurm.testing.ForwardingSlurmClient {
    final AtomicInteger calls = new AtomicInteger();
    final int failures;
    final RuntimeException error;

    Flaky(int failures, RuntimeException error) {
      super(new FakeSlurmClient(Clock.systemUTC(), "n1"));
      this.failures = failures;
      this.error = error;
    }

    @Override
    protected void before() {
      if (calls.incrementAndGet() <= failures) {
        throw error;
      }
    }
  }

  @Test
  void retriesIdempotentCallsOnUnavailability() {
    Flaky flaky = new Flaky(2, new SlurmUnavailableException("blip"));
    new ResilientSlurmClient(flaky, config, registry).ping();
    assertThat(flaky.calls).hasValue(3);
    assertThat(
            registry
                .get(ResilientSlurmClient.REQUEST_TIMER)
                .tag("operation", "ping")
                .tag("outcome", "ok")
                .timer()
                .count())
        .isEqualTo(1);
  }

  @Test
  void neverRetriesASubmit() {
    Flaky flaky = new Flaky(1, new SlurmUnavailableException("blip"));
    ResilientSlurmClient c = new ResilientSlurmClient(flaky, config, registry);
    assertThatThrownBy(
            () -> c.submit(JobSubmission.builder(new PlaceholderTag("a", "b", "c")).build()))
        .isInstanceOf(SlurmUnavailableException.class);
    assertThat(flaky.calls).hasValue(1);
    assertThat(
            registry
                .get(ResilientSlurmClient.REQUEST_TIMER)
                .tag("operation", "submit")
                .tag("outcome", "unavailable")
                .timer()
                .count())
        .isEqualTo(1);
  }

  @Test
  void doesNotRetryRejections() {
    Flaky flaky = new Flaky(5, new SlurmRejectedException("bad partition"));
    ResilientSlurmClient c = new ResilientSlurmClient(flaky, config, registry);
    assertThatThrownBy(c::ping).isInstanceOf(SlurmRejectedException.class);
    assertThat(flaky.calls).hasValue(1);
  }

  @Test
  void opensTheCircuitAfterRepeatedUnavailabilityAndThenFailsFast() {
    Flaky flaky = new Flaky(Integer.MAX_VALUE, new SlurmUnavailableException("down"));
    ResilientSlurmClient c = new ResilientSlurmClient(flaky, config, registry);
    for (int i = 0; i < 2; i++) {
      assertThatThrownBy(c::ping).isInstanceOf(SlurmUnavailableException.class);
    }
    assertThat(c.circuitState()).isEqualTo(CircuitBreaker.State.OPEN);
    int before = flaky.calls.get();
    assertThatThrownBy(c::ping)
        .isInstanceOf(SlurmUnavailableException.class)
        .hasMessageContaining("circuit breaker is open");
    assertThat(flaky.calls).as("no call reaches Slurm while open").hasValue(before);
    assertThat(registry.get(ResilientSlurmClient.CIRCUIT_GAUGE).gauge().value()).isEqualTo(1.0);
  }

  @Test
  void rejectionsDoNotOpenTheCircuit() {
    Flaky flaky = new Flaky(Integer.MAX_VALUE, new SlurmRejectedException("bad"));
    ResilientSlurmClient c = new ResilientSlurmClient(flaky, config, registry);
    for (int i = 0; i < 20; i++) {
      assertThatThrownBy(c::ping).isInstanceOf(SlurmRejectedException.class);
    }
    assertThat(c.circuitState()).isEqualTo(CircuitBreaker.State.CLOSED);
  }
}
