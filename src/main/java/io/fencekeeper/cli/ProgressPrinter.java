package io.fencekeeper.cli;

import io.fencekeeper.run.RunView;
import io.fencekeeper.run.StagingProgress;
import java.io.PrintStream;
import java.time.Duration;
import java.time.Instant;
import java.util.Locale;

/**
 * The live progress of a run: a redrawn bar on a terminal, a plain line every few seconds otherwise
 * (logs and CI keep readable output).
 */
final class ProgressPrinter {

  private static final int WIDTH = 30;

  private final PrintStream out;
  private final boolean interactive;
  private long lastPlainLine;

  ProgressPrinter(PrintStream out, boolean interactive) {
    this.out = out;
    this.interactive = interactive;
  }

  boolean interactive() {
    return interactive;
  }

  void show(RunView run) {
    String line = line(run);
    if (interactive) {
      out.print("\r" + line + "   ");
      out.flush();
    } else if (System.nanoTime() - lastPlainLine > 5_000_000_000L) {
      lastPlainLine = System.nanoTime();
      out.println(line);
    }
  }

  void finish() {
    if (interactive) {
      out.println();
    }
  }

  static String line(RunView run) {
    StagingProgress staging = run.staging();
    if (staging != null) {
      // before the run exists: how far its scope has come, and what it waits for if anything
      return String.format(
          Locale.ROOT,
          "staging: %d rows staged  %.0f rows/s%s%s",
          staging.rowsStaged(),
          staging.rowsPerSecond(),
          staging.resumes() > 0 ? "  resumed " + staging.resumes() + "x" : "",
          run.endReason() == null ? "" : "  (" + run.endReason() + ")");
    }
    long total = Math.max(1, run.counts().total());
    long done = run.counts().done();
    int filled = (int) (WIDTH * done / total);
    String eta =
        run.projectedFinish() == null
            ? "?"
            : formatSeconds(Duration.between(Instant.now(), run.projectedFinish()).toSeconds());
    return String.format(
        "[%s%s] %d/%d  %.0f items/s  backlog age %.1fs  ETA %s",
        "#".repeat(filled),
        ".".repeat(WIDTH - filled),
        done,
        run.counts().total(),
        run.itemsPerSecond(),
        run.backlogAgeSeconds(),
        eta);
  }

  private static String formatSeconds(long seconds) {
    if (seconds < 0) {
      return "0s";
    }
    return seconds < 120 ? seconds + "s" : (seconds / 60) + "m" + (seconds % 60) + "s";
  }
}
