package io.kse.extender.logging;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.core.spi.FilterReply;
import org.junit.jupiter.api.Test;

class FormatFilterTest {
  static FilterReply reply(String format, String chosen) {
    FormatFilter f = new FormatFilter();
    f.setFormat(format);
    f.setChosen(chosen);
    return f.decide(null);
  }

  @Test
  void exactlyTheChosenAppenderWrites() {
    assertThat(reply("text", "text")).isEqualTo(FilterReply.NEUTRAL);
    assertThat(reply("json", "text")).isEqualTo(FilterReply.DENY);
    assertThat(reply("json", " JSON ")).isEqualTo(FilterReply.NEUTRAL);
    assertThat(reply("text", "JSON")).isEqualTo(FilterReply.DENY);
  }
}
