package io.fencekeeper.cli;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.turbo.TurboFilter;
import ch.qos.logback.core.spi.FilterReply;
import org.slf4j.LoggerFactory;
import org.slf4j.Marker;

/**
 * Once {@code run} has printed its report, the embedded node's shutdown (the worker pool draining,
 * sharding handing over, the journal closing) is no news to the person at the terminal: from then
 * on only warnings and errors are logged. An operator who set {@code FENCEKEEPER_LOG_LEVEL} asked
 * for what they get, and keeps it.
 */
final class QuietShutdown {

  private QuietShutdown() {}

  /** From now on, this process logs warnings and errors only (unless the level was chosen). */
  static void begin() {
    String chosen = System.getenv("FENCEKEEPER_LOG_LEVEL");
    if (chosen != null && !chosen.isBlank()) {
      return;
    }
    if (LoggerFactory.getILoggerFactory() instanceof LoggerContext logback) {
      // a turbo filter, not the root level: loggers with a level of their own obey it too
      logback.addTurboFilter(
          new TurboFilter() {
            @Override
            public FilterReply decide(
                Marker marker,
                ch.qos.logback.classic.Logger logger,
                Level level,
                String format,
                Object[] params,
                Throwable t) {
              return level == null || level.isGreaterOrEqual(Level.WARN)
                  ? FilterReply.NEUTRAL
                  : FilterReply.DENY;
            }
          });
    }
  }
}
