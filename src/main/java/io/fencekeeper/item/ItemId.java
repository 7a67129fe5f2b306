package io.fencekeeper.item;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.LocalDate;
import java.time.format.DateTimeParseException;
import java.util.HexFormat;
import java.util.regex.Pattern;

/**
 * The identity of one unit of cleanup: {@code {job}/{businessDate}/{accountId}/{cursor}}. It is
 * stable across retries, resumes and nodes, and so is the idempotency key derived from it.
 */
public record ItemId(String job, LocalDate businessDate, String accountId, String cursor) {

  /** Job names, account ids and cursors: no '/', no whitespace, no control characters. */
  private static final Pattern SEGMENT = Pattern.compile("[A-Za-z0-9._:@+=-]{1,128}");

  public ItemId {
    requireSegment("job", job);
    if (businessDate == null) {
      throw new IllegalArgumentException("businessDate is required");
    }
    requireSegment("accountId", accountId);
    requireSegment("cursor", cursor);
  }

  public static ItemId of(String job, LocalDate businessDate, String accountId, String cursor) {
    return new ItemId(job, businessDate, accountId, cursor);
  }

  /**
   * Parses {@code job/yyyy-MM-dd/account/cursor}; the message names the part that is wrong and the
   * rule it breaks, never the value (an error answer must not echo what a caller sent).
   */
  public static ItemId parse(String value) {
    if (value == null) {
      throw new IllegalArgumentException("itemId is required");
    }
    String[] parts = value.split("/", -1);
    if (parts.length != 4) {
      throw new IllegalArgumentException(
          "itemId must look like job/businessDate/accountId/cursor (4 parts separated by '/')");
    }
    LocalDate date;
    try {
      date = LocalDate.parse(parts[1]);
    } catch (DateTimeParseException e) {
      throw new IllegalArgumentException(
          "itemId has an invalid businessDate (expected yyyy-MM-dd)");
    }
    return new ItemId(parts[0], date, parts[2], parts[3]);
  }

  /** The rule every segment obeys, for messages that must not repeat the offending value. */
  public static final String SEGMENT_RULE = "1-128 characters of letters, digits or ._:@+=-";

  /** Whether {@code value} may be a job, account id or cursor. */
  public static boolean isSegment(String value) {
    return value != null && SEGMENT.matcher(value).matches();
  }

  /** Refuses a value that is not a segment; the message names the field and the rule only. */
  public static void requireSegment(String field, String value) {
    if (!isSegment(value)) {
      throw new IllegalArgumentException(field + " must be " + SEGMENT_RULE);
    }
  }

  /** The run this item belongs to: {@code {job}/{businessDate}}. */
  public String runId() {
    return job + "/" + businessDate;
  }

  /**
   * The provider idempotency key: derived from the item only, never from the attempt or the fencing
   * token, so every retry, resume and node sends the same key for the same cleanup.
   */
  public String idempotencyKey() {
    try {
      byte[] digest =
          MessageDigest.getInstance("SHA-256").digest(value().getBytes(StandardCharsets.UTF_8));
      return "fk-" + HexFormat.of().formatHex(digest, 0, 16);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is part of every JDK", e);
    }
  }

  public String value() {
    return job + "/" + businessDate + "/" + accountId + "/" + cursor;
  }

  @Override
  public String toString() {
    return value();
  }
}
