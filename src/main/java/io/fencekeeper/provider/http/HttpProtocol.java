package io.fencekeeper.provider.http;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.datatype.jdk8.Jdk8Module;
import com.fasterxml.jackson.datatype.jsr310.JavaTimeModule;
import io.fencekeeper.item.ItemId;
import io.fencekeeper.provider.Plan;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;

/**
 * The wire contract of the provider protocol (docs/provider-protocol.md), shared by the http client
 * and the simulated provider so that the two can never drift apart.
 */
public final class HttpProtocol {

  public static final String PLANS_PATH = "/v1/plans";
  public static final String CLEANUPS_PATH = "/v1/cleanups";

  public static final String IDEMPOTENCY_KEY = "Idempotency-Key";
  public static final String FENCING_TOKEN = "Fencing-Token";
  public static final String IDEMPOTENT_REPLAYED = "Idempotent-Replayed";
  public static final String RETRY_AFTER = "Retry-After";
  public static final String RETRY_AFTER_MS = "Retry-After-Ms";

  /** Error codes of the {@code {"error": "<code>", "message": "..."}} envelope. */
  public static final String KEY_IN_USE = "key_in_use";

  public static final String STALE_TOKEN = "stale_token";
  public static final String KEY_REUSED = "key_reused";
  public static final String THROTTLED = "throttled";
  public static final String NOT_FOUND = "not_found";
  public static final String BAD_REQUEST = "bad_request";
  public static final String INTERNAL_ERROR = "internal_error";

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

  /** The one JSON mapping of the protocol: ISO-8601 instants, unknown fields ignored. */
  public static ObjectMapper json() {
    return JSON;
  }

  /**
   * The body of {@code POST /v1/cleanups}. The fencing token travels in a header, not here: a retry
   * by a newer claim with the same body is the same request and must replay, not conflict.
   */
  public record CleanupRequest(
      String itemId,
      String job,
      String businessDate,
      String accountId,
      String cursor,
      String action,
      long amountMinor,
      String description) {

    public static CleanupRequest of(ItemId item, Plan plan) {
      return new CleanupRequest(
          item.value(),
          item.job(),
          item.businessDate().toString(),
          item.accountId(),
          item.cursor(),
          plan.action(),
          plan.amountMinor(),
          plan.description());
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
