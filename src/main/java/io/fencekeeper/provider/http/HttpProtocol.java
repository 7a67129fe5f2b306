package io.fencekeeper.provider.http;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.datatype.jdk8.Jdk8Module;
import com.fasterxml.jackson.datatype.jsr310.JavaTimeModule;
import io.fencekeeper.item.ItemId;
import io.fencekeeper.provider.EffectIdentity;
import io.fencekeeper.provider.Plan;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.DateTimeException;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The wire contract of the provider protocol (docs/provider-protocol.md), shared by the http client
 * and the simulated provider so that the two can never drift apart.
 */
public final class HttpProtocol {

  public static final String PLANS_PATH = "/v1/plans";
  public static final String CLEANUPS_PATH = "/v1/cleanups";

  /**
   * What a provider claims (docs/provider-protocol.md, "Guarantees"): optional, read by {@code
   * provider-check} only.
   */
  public static final String GUARANTEES_PATH = "/v1/guarantees";

  /**
   * The protocol version a request speaks and a 1.1 server answers with (on every answer); a 1.0
   * request or server sends none.
   */
  public static final String PROTOCOL = "Fencekeeper-Protocol";

  public static final String VERSION_1_0 = "1.0";
  public static final String VERSION_1_1 = "1.1";

  public static final String IDEMPOTENCY_KEY = "Idempotency-Key";
  public static final String FENCING_TOKEN = "Fencing-Token";
  public static final String CLEANUP_DEADLINE = "Cleanup-Deadline";
  public static final String IDEMPOTENT_REPLAYED = "Idempotent-Replayed";
  public static final String RETRY_AFTER = "Retry-After";
  public static final String RETRY_AFTER_MS = "Retry-After-Ms";

  /** The most characters of an {@code Idempotency-Key}. */
  public static final int MAX_KEY_LENGTH = 255;

  /**
   * Error codes of the {@code {"error": "<code>", "message": "..."}} envelope: the closed list of
   * docs/provider-protocol.md, "Statuses and codes".
   */
  public static final String BAD_REQUEST = "bad_request";

  public static final String NOT_FOUND = "not_found";
  public static final String METHOD_NOT_ALLOWED = "method_not_allowed";
  public static final String REQUEST_TIMEOUT = "request_timeout";
  public static final String KEY_IN_USE = "key_in_use";
  public static final String STALE_TOKEN = "stale_token";
  public static final String DEADLINE_PASSED = "deadline_passed";
  public static final String PAYLOAD_TOO_LARGE = "payload_too_large";
  public static final String UNSUPPORTED_MEDIA_TYPE = "unsupported_media_type";
  public static final String KEY_REUSED = "key_reused";
  public static final String THROTTLED = "throttled";
  public static final String INTERNAL_ERROR = "internal_error";
  public static final String UNAVAILABLE = "unavailable";

  /** RFC 3339 in UTC, as the deadline is written: whole milliseconds, always three digits. */
  private static final DateTimeFormatter DEADLINE_FORMAT =
      DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSS'Z'").withZone(ZoneOffset.UTC);

  /** What a server accepts as a deadline: RFC 3339, UTC ("Z"), 0-9 fraction digits. */
  private static final Pattern DEADLINE_SHAPE =
      Pattern.compile("\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d{1,9})?Z");

  private static final ObjectMapper JSON =
      JsonMapper.builder()
          .addModule(new JavaTimeModule())
          .addModule(new Jdk8Module())
          .disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS)
          // a provider may add fields; an old client must keep working
          .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
          .serializationInclusion(JsonInclude.Include.NON_NULL)
          .build();

  private HttpProtocol() {}

  /**
   * {@code GET /v1/plans} for one item, relative to the provider's base URL, with the query values
   * percent-encoded.
   */
  public static String planPath(ItemId item) {
    return PLANS_PATH
        + "?job="
        + queryValue(item.job())
        + "&businessDate="
        + queryValue(item.businessDate().toString())
        + "&accountId="
        + queryValue(item.accountId())
        + "&cursor="
        + queryValue(item.cursor());
  }

  private static String queryValue(String value) {
    return URLEncoder.encode(value, StandardCharsets.UTF_8);
  }

  /** The {@code Cleanup-Deadline} header's value: RFC 3339 in UTC, whole milliseconds. */
  public static String formatDeadline(Instant deadline) {
    return DEADLINE_FORMAT.format(deadline);
  }

  /**
   * A {@code Cleanup-Deadline} as a server reads it: empty when it is not an RFC 3339 instant in
   * UTC ({@code 2026-11-30T01:02:13.004Z}; any other offset is refused, as is a missing "Z").
   */
  public static Optional<Instant> parseDeadline(String value) {
    if (value == null || !DEADLINE_SHAPE.matcher(value.trim()).matches()) {
      return Optional.empty();
    }
    try {
      return Optional.of(Instant.parse(value.trim()));
    } catch (DateTimeException e) {
      return Optional.empty();
    }
  }

  /**
   * The minor version of protocol 1 that a {@code Fencekeeper-Protocol} value names: none is 1.0
   * (0), {@code 1.1} is 1, a later {@code 1.x} is x (served as the highest this side knows); empty
   * for anything else (another major version, or not a version), which a server refuses with 400.
   */
  public static Optional<Integer> minorVersion(String header) {
    if (header == null) {
      return Optional.of(0);
    }
    String value = header.trim();
    if (!value.startsWith("1.") || value.length() > 12) {
      return Optional.empty();
    }
    String minor = value.substring(2);
    if (minor.isEmpty() || !minor.chars().allMatch(c -> c >= '0' && c <= '9')) {
      return Optional.empty();
    }
    return Optional.of(Integer.parseInt(minor));
  }

  /** The one JSON mapping of the protocol: ISO-8601 instants, unknown fields ignored. */
  public static ObjectMapper json() {
    return JSON;
  }

  /**
   * The body of {@code POST /v1/cleanups}: 1.0's fields, and {@code currency} only when the plan
   * carried one (left out when null), so a 1.0 provider, which compares every field of a repeated
   * key's body, gets exactly the body it would have got from a 1.0 client. The fencing token and
   * the deadline travel in headers, not here: a retry by a newer claim with the same body is the
   * same request and must replay, not conflict.
   */
  public record CleanupRequest(
      String itemId,
      String job,
      String businessDate,
      String accountId,
      String cursor,
      String action,
      long amountMinor,
      String description,
      String currency) {

    public static CleanupRequest of(ItemId item, Plan plan) {
      return new CleanupRequest(
          item.value(),
          item.job(),
          item.businessDate().toString(),
          item.accountId(),
          item.cursor(),
          plan.action(),
          plan.amountMinor(),
          plan.description(),
          plan.currency());
    }

    /** The fields that define the effect: the only ones a repeated key is compared on in 1.1. */
    public EffectIdentity identity() {
      return new EffectIdentity(itemId, action, amountMinor, currency);
    }
  }

  /**
   * The error envelope. {@code presentedToken} and {@code highestToken} are present only on {@code
   * stale_token}.
   */
  public record ErrorBody(String error, String message, Long presentedToken, Long highestToken) {
    public static ErrorBody of(String error, String message) {
      return new ErrorBody(error, message, null, null);
    }
  }
}
