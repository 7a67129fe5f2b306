package io.fencekeeper.sdk.provider.check;

import java.security.SecureRandom;
import java.time.Duration;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * How a check run goes.
 *
 * @param runId carried by every job name of the run ({@code pc-<runId>-replay}), so that a second
 *     run never meets the first one's keys: 1-24 lower-case letters and digits
 * @param businessDate the business date of every item the checks make
 * @param patience how long one call may take (the provider's request timeout)
 * @param cutOffDeadline the deadline of the cleanup that is cut off after its send, from its send:
 *     the check waits for it (plus the allowance) before it looks the key up
 * @param clockSkewAllowance how far the clocks of this process and the provider may disagree
 * @param concurrentApplies how many applies of one key are sent at once
 */
public record CheckSettings(
    String runId,
    LocalDate businessDate,
    Duration patience,
    Duration cutOffDeadline,
    Duration clockSkewAllowance,
    int concurrentApplies) {

  private static final Pattern RUN_ID = Pattern.compile("[a-z0-9]{1,24}");
  private static final SecureRandom RANDOM = new SecureRandom();

  public CheckSettings {
    if (runId == null || !RUN_ID.matcher(runId).matches()) {
      throw new IllegalArgumentException("runId must be 1-24 lower-case letters and digits");
    }
    if (businessDate == null) {
      throw new IllegalArgumentException("businessDate is required");
    }
    requirePositive("patience", patience);
    requirePositive("cutOffDeadline", cutOffDeadline);
    if (clockSkewAllowance == null || clockSkewAllowance.isNegative()) {
      throw new IllegalArgumentException("clockSkewAllowance must be zero or more");
    }
    if (concurrentApplies < 2 || concurrentApplies > 64) {
      throw new IllegalArgumentException("concurrentApplies must be 2-64");
    }
  }

  /**
   * A fresh run id (the time in base 36 and four random characters), today's date (UTC), 10 s of
   * patience, a cut-off deadline of 3 s, 1 s of clock skew, 4 applies at once.
   */
  public static CheckSettings defaults() {
    return new CheckSettings(
        freshRunId(),
        LocalDate.now(ZoneOffset.UTC),
        Duration.ofSeconds(10),
        Duration.ofSeconds(3),
        Duration.ofSeconds(1),
        4);
  }

  public CheckSettings withPatience(Duration patience) {
    return new CheckSettings(
        runId, businessDate, patience, cutOffDeadline, clockSkewAllowance, concurrentApplies);
  }

  public CheckSettings withClockSkewAllowance(Duration clockSkewAllowance) {
    return new CheckSettings(
        runId, businessDate, patience, cutOffDeadline, clockSkewAllowance, concurrentApplies);
  }

  public CheckSettings withRunId(String runId) {
    return new CheckSettings(
        runId, businessDate, patience, cutOffDeadline, clockSkewAllowance, concurrentApplies);
  }

  public CheckSettings withBusinessDate(LocalDate businessDate) {
    return new CheckSettings(
        runId, businessDate, patience, cutOffDeadline, clockSkewAllowance, concurrentApplies);
  }

  /** Whether {@code runId} may be a run id. */
  public static boolean isRunId(String runId) {
    return runId != null && RUN_ID.matcher(runId).matches();
  }

  /** The job of one check's items: {@code pc-<runId>-<name>}. */
  public String job(String name) {
    return "pc-" + runId + "-" + name;
  }

  static String freshRunId() {
    StringBuilder id = new StringBuilder(Long.toString(System.currentTimeMillis(), 36));
    for (int i = 0; i < 4; i++) {
      id.append(Character.forDigit(RANDOM.nextInt(36), 36));
    }
    return id.toString().toLowerCase(Locale.ROOT);
  }

  private static void requirePositive(String name, Duration value) {
    if (value == null || value.isZero() || value.isNegative()) {
      throw new IllegalArgumentException(name + " must be positive");
    }
  }
}
