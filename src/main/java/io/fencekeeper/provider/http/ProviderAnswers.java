package io.fencekeeper.provider.http;

import static io.fencekeeper.provider.http.HttpProtocol.json;

import io.fencekeeper.provider.Plan;
import io.fencekeeper.provider.ProviderError;
import io.fencekeeper.provider.ProviderException;
import io.fencekeeper.provider.Receipt;
import java.io.IOException;
import java.net.ConnectException;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.Optional;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeoutException;
import org.apache.pekko.http.javadsl.model.HttpHeader;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.scaladsl.model.EntityStreamSizeException;
import org.apache.pekko.stream.BufferOverflowException;
import org.apache.pekko.stream.StreamTcpException;
import org.apache.pekko.util.ByteString;

/**
 * What the provider's answer, or its absence, means (docs/provider-protocol.md): every status and
 * every failure of a call mapped to a {@link ProviderError}, with the one rule that matters most,
 * that once a mutation may have left this process a failure is ambiguous. Pure: {@link
 * HttpProvider} sends and reads, this decides.
 */
final class ProviderAnswers {

  private static final Duration DEFAULT_RETRY_AFTER = Duration.ofSeconds(1);

  private ProviderAnswers() {}

  static String bodyTooLarge() {
    return "a body of more than " + HttpProvider.MAX_RESPONSE_BYTES + " bytes (not read)";
  }

  static String bodyProblem(Throwable failure) {
    if (causedBy(failure, EntityStreamSizeException.class)) {
      return bodyTooLarge();
    }
    if (causedBy(failure, TimeoutException.class)) {
      return "a body that did not arrive within the request timeout";
    }
    String why = String.valueOf(failure.getMessage());
    return "a body that could not be read: " + (why.length() > 200 ? why.substring(0, 200) : why);
  }

  /**
   * A failure without an answer. Only a failure to connect (or a full pool queue) proves the
   * request never left; any later failure (no answer within the request timeout, reset, EOF) on a
   * mutation may have come after the provider applied it.
   */
  static ProviderError classifyFailure(Throwable cause, boolean mutation) {
    if (isConnectFailure(cause)) {
      return new ProviderError.Transient("could not connect to the provider: " + cause);
    }
    if (causedBy(cause, BufferOverflowException.class)) {
      return new ProviderError.Transient(
          "too many requests waiting for a connection to the provider (nothing was sent): "
              + cause.getMessage());
    }
    String what =
        causedBy(cause, TimeoutException.class)
            ? "no answer within the request timeout"
            : "connection failed after sending";
    return mutation
        ? new ProviderError.Ambiguous(what + " (the provider may have applied it): " + cause)
        : new ProviderError.Transient(what + ": " + cause);
  }

  private static boolean isConnectFailure(Throwable cause) {
    if (causedBy(cause, ConnectException.class) || causedBy(cause, UnknownHostException.class)) {
      return true;
    }
    // Pekko's TCP stage reports a failed connect as "Tcp command [Connect(...)] failed ..."
    for (Throwable t = cause; t != null; t = t.getCause()) {
      if (t instanceof StreamTcpException
          && t.getMessage() != null
          && t.getMessage().startsWith("Tcp command [Connect(")) {
        return true;
      }
    }
    return false;
  }

  /**
   * A plan: {@code 200} with a readable plan (something to do names an action, a currency is ISO
   * 4217 when there is one); anything else is {@link #classifyStatus}'s.
   */
  static Plan readPlan(Answer answer) {
    Plan plan = readOk(answer, Plan.class, false);
    if (!plan.nothingToDo() && (plan.action() == null || plan.action().isEmpty())) {
      throw new ProviderException(
          new ProviderError.Transient(
              "provider answered " + answer.status() + " with a plan that names no action"));
    }
    return plan;
  }

  /**
   * The answer to {@code POST /v1/cleanups}: {@code 201} applied now, {@code 200} a replay of the
   * first effect (the status decides, not the body's {@code status} or the {@code
   * Idempotent-Replayed} header); a receipt that cannot be read is ambiguous, since the provider
   * said it accepted. Anything else is {@link #classifyStatus}'s.
   */
  static Receipt readCleanupAnswer(Answer answer, String idempotencyKey) {
    Receipt receipt = readReceipt(answer, idempotencyKey, true);
    return answer.status() == 201
        ? new Receipt(idempotencyKey, receipt.effectId(), Receipt.APPLIED, receipt.appliedAt())
        : new Receipt(idempotencyKey, receipt.effectId(), Receipt.REPLAYED, receipt.appliedAt());
  }

  /** The answer to {@code GET /v1/cleanups/{key}} other than 404: the effect under the key. */
  static Receipt readLookup(Answer answer, String idempotencyKey) {
    if (answer.status() != 200) {
      throw new ProviderException(classifyStatus(answer, false));
    }
    Receipt receipt = readReceipt(answer, idempotencyKey, false);
    return new Receipt(idempotencyKey, receipt.effectId(), Receipt.APPLIED, receipt.appliedAt());
  }

  /**
   * A receipt must name its {@code effectId} and {@code appliedAt}, and the key it answers for
   * (when it names one) must be the key asked: otherwise it is not an answer about this key.
   */
  private static Receipt readReceipt(Answer answer, String idempotencyKey, boolean mutation) {
    Receipt receipt = readOk(answer, Receipt.class, mutation);
    String problem = null;
    if (receipt.effectId() == null || receipt.effectId().isEmpty()) {
      problem = "a receipt without an effectId";
    } else if (receipt.appliedAt() == null) {
      problem = "a receipt without appliedAt";
    } else if (receipt.idempotencyKey() != null
        && !receipt.idempotencyKey().equals(idempotencyKey)) {
      problem = "a receipt for another idempotency key";
    }
    if (problem == null) {
      return receipt;
    }
    throw new ProviderException(
        mutation
            ? new ProviderError.Ambiguous(
                "provider accepted (" + answer.status() + ") but answered " + problem)
            : new ProviderError.Transient(
                "provider answered " + answer.status() + " with " + problem));
  }

  /**
   * {@code 200} or {@code 201} with a readable body of {@code type}; anything else is classified.
   */
  static <T> T readOk(Answer answer, Class<T> type, boolean mutation) {
    int status = answer.status();
    if (status == 200 || status == 201) {
      if (answer.body() == null) {
        throw new ProviderException(
            mutation
                ? new ProviderError.Ambiguous(
                    "provider accepted (" + status + ") but answered " + answer.bodyProblem())
                : new ProviderError.Transient(
                    "provider answered " + status + " with " + answer.bodyProblem()));
      }
      try {
        T value = json().readValue(answer.body(), type);
        if (value == null) {
          throw new IOException("the body is JSON null");
        }
        return value;
      } catch (IOException e) {
        throw new ProviderException(
            mutation
                ? new ProviderError.Ambiguous(
                    "provider accepted but answered garbage: " + shortened(e))
                : new ProviderError.Transient("provider answered garbage: " + shortened(e)),
            e);
      }
    }
    throw new ProviderException(classifyStatus(answer, mutation));
  }

  /**
   * Every answer that is not the protocol's success, as docs/provider-protocol.md ("How
   * Fencekeeper's client classifies answers") prescribes. The status decides, and the envelope's
   * code only where one status has several meanings (409); a code this client does not know, or a
   * body that is not the envelope, is decided by the status alone.
   */
  static ProviderError classifyStatus(Answer answer, boolean mutation) {
    int status = answer.status();
    HttpProtocol.ErrorBody body = errorBody(answer);
    String detail = status + " " + body.error() + ": " + body.message();
    if (status == 429) {
      return new ProviderError.Throttled(retryAfter(answer), detail);
    }
    if (status == 409 && HttpProtocol.STALE_TOKEN.equals(body.error())) {
      long presented =
          body.presentedToken() != null ? body.presentedToken() : answer.presentedToken();
      long highest = body.highestToken() != null ? body.highestToken() : -1L;
      return new ProviderError.StaleToken(presented, highest);
    }
    if (status == 409) {
      // key_in_use (the first request with the key is still being processed), deadline_passed
      // (refused before applying), or a 409 whose envelope cannot be read: nothing was applied by
      // this request; a retry with the same key and token is safe (a stale one is refused again,
      // and the worker's own lease check stops it)
      return new ProviderError.Transient(detail);
    }
    if (status == 408) {
      // the provider gave up reading the request, so it never processed it
      return new ProviderError.Transient(detail);
    }
    if (status >= 400 && status < 500) {
      // 400, 404 (but a lookup's), 405, 413, 415, 422 and any other: the request can never work
      return new ProviderError.Permanent(detail);
    }
    // 5xx (or anything unexpected): on a mutation the provider may have applied it before failing
    return mutation ? new ProviderError.Ambiguous(detail) : new ProviderError.Transient(detail);
  }

  private static String shortened(Throwable e) {
    String why = String.valueOf(e.getMessage());
    return why.length() > 200 ? why.substring(0, 200) : why;
  }

  private static HttpProtocol.ErrorBody errorBody(Answer answer) {
    if (answer.body() == null) {
      return HttpProtocol.ErrorBody.of("http_" + answer.status(), "(" + answer.bodyProblem() + ")");
    }
    try {
      HttpProtocol.ErrorBody body = json().readValue(answer.body(), HttpProtocol.ErrorBody.class);
      if (body != null && body.error() != null) {
        return body;
      }
    } catch (IOException | RuntimeException e) {
      // not the documented envelope (a proxy's HTML page, say): fall through to the status alone
    }
    String text = new String(answer.body(), StandardCharsets.UTF_8);
    return HttpProtocol.ErrorBody.of(
        "http_" + answer.status(), text.length() > 200 ? text.substring(0, 200) : text);
  }

  /**
   * {@code Retry-After-Ms} wins for sub-second precision; otherwise {@code Retry-After} in
   * delta-seconds or as an HTTP-date (RFC 9110 §10.2.3).
   */
  static Duration retryAfter(Answer answer) {
    Optional<String> millis = answer.retryAfterMs();
    if (millis.isPresent()) {
      try {
        return Duration.ofMillis(Math.max(0, Long.parseLong(millis.get().trim())));
      } catch (NumberFormatException e) {
        // fall back to Retry-After
      }
    }
    if (answer.retryAfter().isEmpty()) {
      return DEFAULT_RETRY_AFTER;
    }
    String value = answer.retryAfter().get().trim();
    try {
      return Duration.ofSeconds(Math.max(0, Long.parseLong(value)));
    } catch (NumberFormatException notSeconds) {
      try {
        Instant at = ZonedDateTime.parse(value, DateTimeFormatter.RFC_1123_DATE_TIME).toInstant();
        Duration until = Duration.between(Instant.now(), at);
        return until.isNegative() ? Duration.ZERO : until;
      } catch (DateTimeParseException notDate) {
        return DEFAULT_RETRY_AFTER;
      }
    }
  }

  private static boolean causedBy(Throwable failure, Class<? extends Throwable> type) {
    for (Throwable t = failure; t != null; t = t.getCause()) {
      if (type.isInstance(t)) {
        return true;
      }
    }
    return false;
  }

  static Throwable unwrap(Throwable failure) {
    Throwable cause = failure;
    while (cause instanceof CompletionException && cause.getCause() != null) {
      cause = cause.getCause();
    }
    return cause;
  }

  /**
   * An answer as the mapping reads it.
   *
   * @param body the body, or null when it was not read (then {@code bodyProblem} says why)
   * @param protocol the {@code Fencekeeper-Protocol} the answer carried, {@code 1.0} without one
   * @param presentedToken the Fencing-Token the request carried (-1 on a GET)
   */
  record Answer(
      int status,
      byte[] body,
      String bodyProblem,
      Optional<String> retryAfter,
      Optional<String> retryAfterMs,
      String protocol,
      long presentedToken) {

    static Answer of(
        HttpResponse response, ByteString body, String bodyProblem, long presentedToken) {
      return new Answer(
          response.status().intValue(),
          body == null ? null : body.toArray(),
          bodyProblem,
          header(response, HttpProtocol.RETRY_AFTER),
          header(response, HttpProtocol.RETRY_AFTER_MS),
          protocolOf(header(response, HttpProtocol.PROTOCOL)),
          presentedToken);
    }

    /** The version an answer says it speaks: none is a 1.0 server; a value is kept short. */
    static String protocolOf(Optional<String> header) {
      return header
          .map(String::trim)
          .map(value -> value.length() > 16 ? value.substring(0, 16) : value)
          .filter(value -> !value.isEmpty())
          .orElse(HttpProtocol.VERSION_1_0);
    }

    private static Optional<String> header(HttpResponse response, String name) {
      return response.getHeader(name).map(HttpHeader::value);
    }
  }
}
