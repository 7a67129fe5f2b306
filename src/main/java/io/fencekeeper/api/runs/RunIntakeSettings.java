package io.fencekeeper.api.runs;

import com.typesafe.config.Config;
import java.time.Duration;

/**
 * How the API takes a run's scope in.
 *
 * @param maxUploadBytes a {@code text/csv} upload larger than this answers 413 ({@code
 *     fencekeeper.http.max-upload-bytes}); the item limit is {@code max-items-per-run}
 * @param uploadStallTimeout an upload that sends nothing for this long fails
 * @param createWait how long a create waits for its scope to be staged before it answers 202 with
 *     the run STAGING ({@code fencekeeper.create-wait}); well below the HTTP server's request
 *     timeout, so that a slow create never answers 503 while staging goes on
 */
public record RunIntakeSettings(
    long maxUploadBytes, Duration uploadStallTimeout, Duration createWait) {

  static final long DEFAULT_MAX_UPLOAD_BYTES = 2L * 1024 * 1024 * 1024;
  static final Duration DEFAULT_CREATE_WAIT = Duration.ofSeconds(5);

  public RunIntakeSettings {
    if (maxUploadBytes < 1024) {
      throw new IllegalArgumentException("fencekeeper.http.max-upload-bytes must be >= 1 KiB");
    }
    if (createWait.isNegative()) {
      throw new IllegalArgumentException("fencekeeper.create-wait must not be negative");
    }
  }

  static RunIntakeSettings defaults() {
    return new RunIntakeSettings(
        DEFAULT_MAX_UPLOAD_BYTES, Duration.ofSeconds(60), DEFAULT_CREATE_WAIT);
  }

  public static RunIntakeSettings fromConfig(Config config) {
    RunIntakeSettings defaults = defaults();
    return new RunIntakeSettings(
        config.hasPath("fencekeeper.http.max-upload-bytes")
            ? config.getBytes("fencekeeper.http.max-upload-bytes")
            : defaults.maxUploadBytes(),
        defaults.uploadStallTimeout(),
        config.hasPath("fencekeeper.create-wait")
            ? config.getDuration("fencekeeper.create-wait")
            : defaults.createWait());
  }
}
