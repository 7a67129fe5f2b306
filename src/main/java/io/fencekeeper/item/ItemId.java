package io.fencekeeper.item;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.DateTimeException;
import java.time.LocalDate;
import java.util.HexFormat;

/**
 * The identity of one unit of cleanup: {@code {job}/{businessDate}/{accountId}/{cursor}}. It is
 * stable across retries, resumes and nodes, and so is the idempotency key derived from it.
 */
public record ItemId(String job, LocalDate businessDate, String accountId, String cursor) {

  /** The longest job name, account id or cursor. */
  private static final int SEGMENT_MAX = 128;

  /**
   * SHA-256, cloned for each key: looking a digest up by name costs more than the hash of an id.
   * (Every JDK's SHA-256 can be cloned.)
   */
  private static final MessageDigest SHA_256 = sha256();

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
      date = parseDate(parts[1]);
    } catch (DateTimeException e) {
      throw new IllegalArgumentException(
          "itemId has an invalid businessDate (expected yyyy-MM-dd)");
    }
    return new ItemId(parts[0], date, parts[2], parts[3]);
  }

  /** The rule every segment obeys, for messages that must not repeat the offending value. */
  public static final String SEGMENT_RULE = "1-128 characters of letters, digits or ._:@+=-";

  /**
   * Whether {@code value} may be a job, account id or cursor: {@code [A-Za-z0-9._:@+=-]{1,128}}.
   * Checked by hand: every item id is checked on every hop, and a regex matcher per segment was a
   * measurable share of a node's CPU (docs/bench.md, "Where a node's CPU goes").
   */
  public static boolean isSegment(String value) {
    if (value == null || value.isEmpty() || value.length() > SEGMENT_MAX) {
      return false;
    }
    for (int i = 0; i < value.length(); i++) {
      if (!isSegmentChar(value.charAt(i))) {
        return false;
      }
    }
    return true;
  }

  private static boolean isSegmentChar(char c) {
    return (c >= 'a' && c <= 'z')
        || (c >= 'A' && c <= 'Z')
        || (c >= '0' && c <= '9')
        || c == '.'
        || c == '_'
        || c == ':'
        || c == '@'
        || c == '+'
        || c == '='
        || c == '-';
  }

  /**
   * {@code yyyy-MM-dd} read by hand, what {@link LocalDate#parse} reads slowly through a formatter;
   * any other shape (a signed or longer year) still goes through the formatter.
   */
  static LocalDate parseDate(String text) {
    if (text.length() == 10 && text.charAt(4) == '-' && text.charAt(7) == '-') {
      int year = digits(text, 0, 4);
      int month = digits(text, 5, 7);
      int day = digits(text, 8, 10);
      if (year >= 0 && month >= 0 && day >= 0) {
        return LocalDate.of(year, month, day); // a month 13 or a 30 February: DateTimeException
      }
    }
    return LocalDate.parse(text);
  }

  /** The decimal number in {@code text[from, to)}, or -1 when a character is not a digit. */
  private static int digits(String text, int from, int to) {
    int n = 0;
    for (int i = from; i < to; i++) {
      char c = text.charAt(i);
      if (c < '0' || c > '9') {
        return -1;
      }
      n = n * 10 + (c - '0');
    }
    return n;
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
    return idempotencyKeyOf(value());
  }

  /**
   * The key of the item whose {@link #value()} is {@code value} (an entity knows its id string).
   */
  static String idempotencyKeyOf(String value) {
    byte[] digest = sha256Copy().digest(value.getBytes(StandardCharsets.UTF_8));
    return "fk-" + HexFormat.of().formatHex(digest, 0, 16);
  }

  private static MessageDigest sha256() {
    try {
      return MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is part of every JDK", e);
    }
  }

  private static MessageDigest sha256Copy() {
    try {
      return (MessageDigest) SHA_256.clone();
    } catch (CloneNotSupportedException e) {
      return sha256();
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
