package io.fencekeeper.archive;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Locale;
import java.util.Optional;

/**
 * {@code fencekeeper.retention} (docs/design.md, "Retention and the archive"): how long an ended
 * run is kept before it is archived and deleted ({@code keep-ended-runs-for}; empty = {@code off},
 * every run is kept), where archives go ({@code archive-dir}), how many items a delete transaction
 * takes ({@code batch-size}) and how often the keeper looks whether a day has passed since its last
 * pass ({@code check-interval}).
 */
public record RetentionSettings(
    Optional<Duration> keepEndedRunsFor, Path archiveDir, int batchSize, Duration checkInterval) {

  public static final String PATH = "fencekeeper.retention";
  public static final int MAX_BATCH = 10_000;

  public RetentionSettings {
    if (keepEndedRunsFor.isPresent()
        && (keepEndedRunsFor.get().isZero() || keepEndedRunsFor.get().isNegative())) {
      throw new IllegalArgumentException(
          PATH
              + ".keep-ended-runs-for must be longer than 0 (or off to keep every run), got "
              + keepEndedRunsFor.get());
    }
    if (batchSize < 1 || batchSize > MAX_BATCH) {
      throw new IllegalArgumentException(
          PATH + ".batch-size must be between 1 and " + MAX_BATCH + ", got " + batchSize);
    }
    if (checkInterval.isZero() || checkInterval.isNegative()) {
      throw new IllegalArgumentException(
          PATH + ".check-interval must be longer than 0, got " + checkInterval);
    }
  }

  /** The settings of the resolved configuration; a bad value is refused with its key. */
  public static RetentionSettings from(Config config) {
    Config c = config.getConfig(PATH);
    return new RetentionSettings(
        keep(c),
        archiveDir(c.getString("archive-dir")),
        c.getInt("batch-size"),
        c.getDuration("check-interval"));
  }

  private static Optional<Duration> keep(Config c) {
    String key = "keep-ended-runs-for";
    String text = c.getString(key).trim();
    if (text.toLowerCase(Locale.ROOT).equals("off")) {
      return Optional.empty();
    }
    Duration keep;
    try {
      keep = c.getDuration(key);
    } catch (ConfigException.BadValue e) {
      throw new IllegalArgumentException(
          PATH + "." + key + " must be a duration such as 90d or 12h, or off; got '" + text + "'");
    }
    if (keep.isZero() || keep.isNegative()) {
      throw new IllegalArgumentException(
          PATH
              + "."
              + key
              + " must be longer than 0 (or off to keep every run), got '"
              + text
              + "'");
    }
    return Optional.of(keep);
  }

  private static Path archiveDir(String text) {
    if (text.isBlank()) {
      throw new IllegalArgumentException(PATH + ".archive-dir must name a directory");
    }
    try {
      return Path.of(text.trim()).toAbsolutePath().normalize();
    } catch (InvalidPathException e) {
      throw new IllegalArgumentException(
          PATH + ".archive-dir is not a valid path: " + e.getReason());
    }
  }

  /**
   * Creates the archive directory if it is missing and proves it writable by writing and deleting a
   * file in it (permissions alone do not tell: root passes them, a read-only mount does not). A
   * node refuses to start on a directory it could not archive to, rather than fail a year later.
   */
  public RetentionSettings checkArchiveDir() {
    try {
      Files.createDirectories(archiveDir);
    } catch (IOException | SecurityException e) {
      throw new IllegalArgumentException(
          PATH + ".archive-dir " + archiveDir + " cannot be created: " + reason(e));
    }
    try {
      Path probe = Files.createTempFile(archiveDir, ".write-probe-", ".tmp");
      Files.delete(probe);
    } catch (IOException | SecurityException e) {
      throw new IllegalArgumentException(
          PATH + ".archive-dir " + archiveDir + " is not writable: " + reason(e));
    }
    return this;
  }

  private static String reason(Exception e) {
    String kind = e.getClass().getSimpleName();
    return e instanceof java.nio.file.FileSystemException fs && fs.getReason() != null
        ? fs.getReason()
        : kind;
  }

  /** Runs that ended before this instant are due, at {@code now}; empty when retention is off. */
  public Optional<Instant> cutoff(Instant now) {
    return keepEndedRunsFor.map(now::minus);
  }
}
