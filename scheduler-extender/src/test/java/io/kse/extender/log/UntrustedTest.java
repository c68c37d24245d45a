package io.kse.extender.log;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import org.junit.jupiter.api.Test;

class UntrustedTest {
  @Test
  void aNewlineCannotForgeALogLineNorAQuoteBreakTheFormat() {
    assertThat(Untrusted.text("llm-0\n06:00:00 INFO bind pod=x result=BOUND"))
        .isEqualTo("llm-0\\n06:00:00 INFO bind pod=x result=BOUND");
    assertThat(Untrusted.text("a\"b\\c\r\t\u0000\u2028"))
        .isEqualTo("a\\\"b\\\\c\\r\\t\\u0000\\u2028");
    assertThat(Untrusted.text(null)).isEmpty();
  }

  @Test
  void longTextIsCutWithHowMuchWasCut() {
    String s = Untrusted.text("x".repeat(1_000_000));
    assertThat(s).hasSizeLessThan(Untrusted.MAX_CHARS + 40).endsWith("...(999744 more chars)");
  }

  @Test
  void aBudgetLetsAFewLinesThroughPerWindowAndCountsTheRest() {
    MutableClock clock = new MutableClock();
    LogBudget b = new LogBudget(clock, 1000, 2);
    assertThat(b.admit()).isZero();
    assertThat(b.admit()).isZero();
    for (int i = 0; i < 1000; i++) {
      assertThat(b.admit()).isEqualTo(-1);
    }
    clock.now = clock.now.plusMillis(1000);
    assertThat(b.admit()).as("the next line says how many were dropped").isEqualTo(1000);
    assertThat(b.admit()).isZero();
  }

  static final class MutableClock extends Clock {
    Instant now = Instant.parse("2026-11-24T06:00:00Z");

    @Override
    public ZoneOffset getZone() {
      return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(java.time.ZoneId zone) {
      return this;
    }

    @Override
    public Instant instant() {
      return now;
    }
  }
}
