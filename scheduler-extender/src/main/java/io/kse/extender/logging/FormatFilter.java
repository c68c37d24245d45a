package io.kse.extender.logging;

import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.filter.Filter;
import ch.qos.logback.core.spi.FilterReply;

/**
 * Lets an appender write only when {@code KSE_LOG_FORMAT} names it (logback.xml): both appenders
 * stay attached, so logback has nothing to warn about, and the choice needs no expression engine.
 */
public final class FormatFilter extends Filter<ILoggingEvent> {
  private String format = "";
  private String chosen = "text";

  /** The format this appender writes. */
  public void setFormat(String format) {
    this.format = format;
  }

  /** The format asked for ({@code ${KSE_LOG_FORMAT:-text}}), any case. */
  public void setChosen(String chosen) {
    this.chosen = chosen;
  }

  @Override
  public FilterReply decide(ILoggingEvent event) {
    return format.equalsIgnoreCase(chosen.trim()) ? FilterReply.NEUTRAL : FilterReply.DENY;
  }
}
