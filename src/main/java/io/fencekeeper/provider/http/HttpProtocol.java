package io.fencekeeper.provider.http;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MapperFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.datatype.jdk8.Jdk8Module;
import com.fasterxml.jackson.datatype.jsr310.JavaTimeModule;
import io.fencekeeper.item.ItemId;
import io.fencekeeper.provider.EffectIdentity;
import io.fencekeeper.provider.Plan;
import java.io.IOException;
import java.net.URLEncoder;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.time.DateTimeException;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Optional;
import java.util.OptionalLong;
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

  /** The most characters (code points) of a plan's {@code description}. */
  public static final int MAX_DESCRIPTION_LENGTH = 1_000;

  /** The most characters of a plan's {@code action}. */
  public static final int MAX_ACTION_LENGTH = 255;

  /**
   * The furthest ahead of a server's clock a {@code Cleanup-Deadline} must be accepted; a server
   * may refuse one further ahead (400). Fencekeeper's are at most its request timeout ahead, which
   * is at most {@link #MAX_REQUEST_TIMEOUT}.
   */
  public static final Duration MAX_DEADLINE_AHEAD = Duration.ofMinutes(10);

  /** The longest request timeout a provider may be given, so every deadline sent is within it. */
  public static final Duration MAX_REQUEST_TIMEOUT = Duration.ofMinutes(5);

  /**
   * Error codes of the {@code {"error": "<code>", "message": "..."}} envelope: the closed list of
   * docs/provider-protocol.md, "Statuses and codes".
   */
  public static final String BAD_REQUEST = "bad_request";

  public static final String NOT_FOUND = "not_found";
  public static final String UNKNOWN_ENDPOINT = "unknown_endpoint";
  public static final String METHOD_NOT_ALLOWED = "method_not_allowed";
  public static final String REQUEST_TIMEOUT = "request_timeout";
  public static final String KEY_IN_USE = "key_in_use";
  public static final String STALE_TOKEN = "stale_token";
  public static final String DEADLINE_PASSED = "deadline_passed";
  public static final String PAYLOAD_TOO_LARGE = "payload_too_large";
  public static final String UNSUPPORTED_MEDIA_TYPE = "unsupported_media_type";
  public static final String KEY_REUSED = "key_reused";
  public static final String PLAN_MISMATCH = "plan_mismatch";
  public static final String THROTTLED = "throttled";
  public static final String INTERNAL_ERROR = "internal_error";
  public static final String UNAVAILABLE = "unavailable";

  /** RFC 3339 in UTC, as the deadline is written: whole milliseconds, always three digits. */
  private static final DateTimeFormatter DEADLINE_FORMAT =
      DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSS'Z'").withZone(ZoneOffset.UTC);

  /**
   * An instant of the protocol (docs/provider-protocol.md, "Conventions"): RFC 3339 in UTC, upper
   * case {@code T} and {@code Z}, hours 00-23, no leap second, 0-9 fraction digits.
   */
  private static final Pattern INSTANT_SHAPE =
      Pattern.compile("\\d{4}-\\d{2}-\\d{2}T([01]\\d|2[0-3]):[0-5]\\d:[0-5]\\d(\\.\\d{1,9})?Z");

  private static final Pattern DATE_SHAPE = Pattern.compile("\\d{4}-\\d{2}-\\d{2}");

  /** A version: {@code 1.} and a minor of 1-9 digits without a leading zero. */
  private static final Pattern VERSION_SHAPE = Pattern.compile("1\\.(0|[1-9]\\d{0,8})");

  /** A fencing token: decimal digits without a leading zero ({@code 0} itself allowed). */
  private static final Pattern TOKEN_SHAPE = Pattern.compile("0|[1-9]\\d{0,18}");

  private static final ObjectMapper JSON =
      JsonMapper.builder()
          .addModule(new JavaTimeModule())
          .addModule(new Jdk8Module())
          .disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS)
          // a provider may add fields; an old client must keep working
          .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
          // one reading of every body, whoever reads it: a member twice is refused (a proxy and
          // a server must never see two different values), 12.5 is not the integer 12 and "5" is
          // not the number 5
          .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
          .disable(DeserializationFeature.ACCEPT_FLOAT_AS_INT)
          .disable(MapperFeature.ALLOW_COERCION_OF_SCALARS)
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
        + queryValue(item.cursor())
        + "&itemId="
        + queryValue(item.value())
        + "&idempotencyKey="
        + queryValue(item.idempotencyKey());
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
    return value == null ? Optional.empty() : parseInstant(value.trim());
  }

  /**
   * An instant as the protocol writes it ({@code 2026-11-30T01:02:03.004Z}: UTC, upper-case {@code
   * T} and {@code Z}, no leap second, no other offset, 0-9 fraction digits); empty for anything
   * else, a date that does not exist included.
   */
  public static Optional<Instant> parseInstant(String value) {
    if (value == null || !INSTANT_SHAPE.matcher(value).matches()) {
      return Optional.empty();
    }
    try {
      return Optional.of(Instant.parse(value));
    } catch (DateTimeException e) {
      return Optional.empty();
    }
  }

  /** A date of the protocol ({@code businessDate}): {@code yyyy-MM-dd}, a day that exists. */
  public static Optional<LocalDate> parseDate(String value) {
    if (value == null || !DATE_SHAPE.matcher(value).matches()) {
      return Optional.empty();
    }
    try {
      return Optional.of(LocalDate.parse(value));
    } catch (DateTimeException e) {
      return Optional.empty();
    }
  }

  /**
   * A body or an answer as JSON: the bytes must be UTF-8 (no byte-order mark, nothing Jackson would
   * guess as UTF-16), and no object may name a member twice. Throws what cannot be read.
   */
  public static JsonNode readJson(byte[] bytes) throws IOException {
    String text;
    try {
      text =
          StandardCharsets.UTF_8
              .newDecoder()
              .onMalformedInput(CodingErrorAction.REPORT)
              .onUnmappableCharacter(CodingErrorAction.REPORT)
              .decode(ByteBuffer.wrap(bytes))
              .toString();
    } catch (CharacterCodingException e) {
      throw new IOException("the body is not UTF-8"); // what the bytes were is not said
    }
    return JSON.readTree(text);
  }

  /**
   * Whether {@code key} may be an idempotency key: 1-255 characters of visible ASCII ({@code
   * 0x21}-{@code 0x7E}). A server accepts every such key and refuses anything else.
   */
  public static boolean isKey(String key) {
    if (key == null || key.isEmpty() || key.length() > MAX_KEY_LENGTH) {
      return false;
    }
    for (int i = 0; i < key.length(); i++) {
      char c = key.charAt(i);
      if (c < 0x21 || c > 0x7e) {
        return false;
      }
    }
    return true;
  }

  /**
   * A {@code Fencing-Token}: decimal digits without a leading zero, 0 to 2^63-1; empty for anything
   * else.
   */
  public static OptionalLong parseToken(String value) {
    if (value == null || !TOKEN_SHAPE.matcher(value).matches()) {
      return OptionalLong.empty();
    }
    try {
      return OptionalLong.of(Long.parseLong(value));
    } catch (NumberFormatException beyondLong) {
      return OptionalLong.empty();
    }
  }

  /**
   * Whether {@code description} may be a plan's: at most {@link #MAX_DESCRIPTION_LENGTH} characters
   * (code points), so that every cleanup body Fencekeeper sends fits a server's limit.
   */
  public static boolean isDescription(String description) {
    return description.length() <= MAX_DESCRIPTION_LENGTH
        || description.codePointCount(0, description.length()) <= MAX_DESCRIPTION_LENGTH;
  }

  /** Whether {@code action} may be a plan's: 1-255 characters. */
  public static boolean isAction(String action) {
    return action != null && !action.isEmpty() && action.length() <= MAX_ACTION_LENGTH;
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
    if (!VERSION_SHAPE.matcher(value).matches()) {
      return Optional.empty();
    }
    return Optional.of(Integer.parseInt(value.substring(2)));
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
