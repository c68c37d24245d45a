package io.kse.extender.log;

import static org.assertj.core.api.Assertions.assertThat;

import io.kse.slurm.testing.MutableClock;
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
    clock.advance(java.time.Duration.ofMillis(1000));
    assertThat(b.admit()).as("the next line says how many were dropped").isEqualTo(1000);
    assertThat(b.admit()).isZero();
  }
}
