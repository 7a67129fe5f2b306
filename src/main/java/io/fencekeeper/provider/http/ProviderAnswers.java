package io.fencekeeper.provider.http;

import static io.fencekeeper.provider.http.HttpProtocol.json;

import com.fasterxml.jackson.databind.JsonNode;
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
   * A plan: {@code 200} with a readable plan (docs/provider-protocol.md, "Plans"): {@code
   * nothingToDo} a boolean; with something to do, an {@code action} of 1-255 characters, an integer
   * {@code amountMinor} and a {@code currency} of ISO 4217's shape when there is one; a {@code
   * description} of at most 1,000 characters when there is one. Any other plan is an answer the
   * client cannot read ({@link ProviderError.Transient}); anything but {@code 200} is {@link
   * #classifyStatus}'s.
   */
  static Plan readPlan(Answer answer) {
    JsonNode plan = readOk(answer, JsonNode.class, false);
    String problem = planProblem(plan);
    if (problem != null) {
      throw new ProviderException(
          new ProviderError.Transient(
              "provider answered " + answer.status() + " with a plan it cannot read: " + problem));
    }
    String description =
        plan.path("description").isTextual() ? plan.get("description").asText() : null;
    if (plan.get("nothingToDo").booleanValue()) {
      return Plan.nothing(description);
    }
    JsonNode currency = plan.path("currency");
    return new Plan(
        false,
        plan.get("action").asText(),
        plan.get("amountMinor").longValue(),
        description,
        currency.isTextual() ? currency.asText() : null);
  }

  /** What makes {@code plan} unreadable, or null when it is a plan. */
  private static String planProblem(JsonNode plan) {
    if (!plan.isObject()) {
      return "not a JSON object";
    }
    if (!plan.path("nothingToDo").isBoolean()) {
      return "nothingToDo is not a boolean";
    }
    JsonNode description = plan.path("description");
    if (!absent(description)
        && !(description.isTextual() && HttpProtocol.isDescription(description.asText()))) {
      return "description is not text of at most "
          + HttpProtocol.MAX_DESCRIPTION_LENGTH
          + " characters";
    }
    if (plan.get("nothingToDo").booleanValue()) {
      return null; // action, amountMinor and currency mean nothing then
    }
    JsonNode action = plan.path("action");
    if (!action.isTextual() || !HttpProtocol.isAction(action.asText())) {
      return "something to do without an action of 1-"
          + HttpProtocol.MAX_ACTION_LENGTH
          + " characters";
    }
    JsonNode amount = plan.path("amountMinor");
    if (!amount.isIntegralNumber() || !amount.canConvertToLong()) {
      return "something to do without an integer amountMinor (64 bits, no fraction or exponent)";
    }
    JsonNode currency = plan.path("currency");
    if (!absent(currency) && !(currency.isTextual() && Plan.isCurrency(currency.asText()))) {
      return "a currency that is not three letters A-Z";
    }
    return null;
  }

  /** A member that is not there: missing, or {@code null}, which is the same. */
  private static boolean absent(JsonNode member) {
    return member.isMissingNode() || member.isNull();
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

  /**
   * The answer to {@code GET /v1/cleanups/{key}}: {@code 200} the effect under the key; a {@code
   * 404} that is the protocol's "not applied" (the envelope with {@code not_found}, and the version
   * header from a server known to speak 1.1: {@link #isNotApplied}) is empty. Any other {@code 404}
   * (a proxy's page, a wrong path prefix, a path the server does not know) says nothing about the
   * key: {@link ProviderError.Transient}, never "not applied".
   */
  static Optional<Receipt> readLookup(Answer answer, String idempotencyKey) {
    if (answer.status() == 404) {
      if (isNotApplied(answer)) {
        return Optional.empty();
      }
      throw new ProviderException(
          new ProviderError.Transient(
              "provider answered 404 that is not the protocol's not_found (no envelope with"
                  + " not_found"
                  + (answer.hasProtocol() ? "" : ", or no version header from a 1.1 server")
                  + "): not an answer about the key, maybe a wrong path or a proxy: "
                  + errorBody(answer).message()));
    }
    if (answer.status() != 200) {
      throw new ProviderException(classifyStatus(answer, false));
    }
    Receipt receipt = readReceipt(answer, idempotencyKey, false);
    return Optional.of(
        new Receipt(idempotencyKey, receipt.effectId(), Receipt.APPLIED, receipt.appliedAt()));
  }

  /**
   * A lookup's {@code 404} that means "no effect under this key": the envelope with {@code
   * not_found} and, when the client knew the server as 1.1 before this answer, the version header
   * (every answer of a 1.1 server carries it; one without it came from something in between).
   */
  static boolean isNotApplied(Answer answer) {
    if (answer.status() != 404 || !HttpProtocol.NOT_FOUND.equals(envelopeCode(answer))) {
      return false;
    }
    return answer.hasProtocol() || !speaks11(answer.knownProtocol());
  }

  /**
   * The server's version after {@code answer}: the version header when it carries one; 1.0 when it
   * does not but is the protocol's own answer (a {@code 2xx} whose body is a JSON object, or the
   * error envelope); otherwise unchanged (empty): an HTTP stack's or a proxy's answer says nothing
   * about the server, and a 404 that {@link #readLookup} does not take as the server's is not the
   * server's either.
   */
  static Optional<String> versionAfter(Answer answer) {
    if (answer.hasProtocol()) {
      return Optional.of(answer.protocol());
    }
    boolean success = answer.status() >= 200 && answer.status() < 300;
    boolean own = success ? jsonObject(answer) != null : envelopeCode(answer) != null;
    if (!own || (answer.status() == 404 && speaks11(answer.knownProtocol()))) {
      return Optional.empty();
    }
    return Optional.of(HttpProtocol.VERSION_1_0);
  }

  /** Whether a version the client knows is 1.1 or later (null: not known yet). */
  static boolean speaks11(String version) {
    return version != null && !version.equals(HttpProtocol.VERSION_1_0);
  }

  /** The envelope's {@code error} code, or null when the body is not the envelope. */
  private static String envelopeCode(Answer answer) {
    JsonNode body = jsonObject(answer);
    return body != null && body.path("error").isTextual() ? body.get("error").asText() : null;
  }

  private static JsonNode jsonObject(Answer answer) {
    if (answer.body() == null) {
      return null;
    }
    try {
      JsonNode body = HttpProtocol.readJson(answer.body());
      return body != null && body.isObject() ? body : null;
    } catch (IOException | RuntimeException e) {
      return null;
    }
  }

  /**
   * A receipt (docs/provider-protocol.md, "Answers"): a JSON object with a non-empty {@code
   * effectId} and an {@code appliedAt} instant of the protocol's form; {@code idempotencyKey}, when
   * there is one, the key asked; {@code status} is not read (the HTTP status decides). Otherwise it
   * is not an answer about this key.
   */
  private static Receipt readReceipt(Answer answer, String idempotencyKey, boolean mutation) {
    JsonNode receipt = readOk(answer, JsonNode.class, mutation);
    String problem = null;
    Optional<Instant> appliedAt = Optional.empty();
    if (!receipt.isObject()) {
      problem = "a receipt that is not a JSON object";
    } else if (!receipt.path("effectId").isTextual()
        || receipt.get("effectId").asText().isEmpty()) {
      problem = "a receipt without an effectId";
    } else if ((appliedAt = instant(receipt.path("appliedAt"))).isEmpty()) {
      problem = "a receipt without an appliedAt of the protocol's form (2026-11-30T01:02:03.004Z)";
    } else if (!absent(receipt.path("idempotencyKey"))
        && !idempotencyKey.equals(receipt.path("idempotencyKey").textValue())) {
      problem = "a receipt for another idempotency key";
    }
    if (problem == null) {
      return new Receipt(
          idempotencyKey, receipt.get("effectId").asText(), Receipt.APPLIED, appliedAt.get());
    }
    throw new ProviderException(
        mutation
            ? new ProviderError.Ambiguous(
                "provider accepted (" + answer.status() + ") but answered " + problem)
            : new ProviderError.Transient(
                "provider answered " + answer.status() + " with " + problem));
  }

  private static Optional<Instant> instant(JsonNode member) {
    return member.isTextual() ? HttpProtocol.parseInstant(member.asText()) : Optional.empty();
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
        JsonNode tree = HttpProtocol.readJson(answer.body());
        T value = type == JsonNode.class ? type.cast(tree) : json().treeToValue(tree, type);
        if (value == null || tree.isNull()) {
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
   * @param hasProtocol whether it carried the header at all
   * @param knownProtocol the server's version as the client knew it before this answer (null: not
   *     known yet)
   * @param presentedToken the Fencing-Token the request carried (-1 on a GET)
   */
  record Answer(
      int status,
      byte[] body,
      String bodyProblem,
      Optional<String> retryAfter,
      Optional<String> retryAfterMs,
      String protocol,
      boolean hasProtocol,
      String knownProtocol,
      long presentedToken) {

    static Answer of(
        HttpResponse response,
        ByteString body,
        String bodyProblem,
        long presentedToken,
        String knownProtocol) {
      Optional<String> version = protocolHeader(header(response, HttpProtocol.PROTOCOL));
      return new Answer(
          response.status().intValue(),
          body == null ? null : body.toArray(),
          bodyProblem,
          header(response, HttpProtocol.RETRY_AFTER),
          header(response, HttpProtocol.RETRY_AFTER_MS),
          version.orElse(HttpProtocol.VERSION_1_0),
          version.isPresent(),
          knownProtocol,
          presentedToken);
    }

    /** The version an answer says it speaks, kept short; empty when it says none. */
    static Optional<String> protocolHeader(Optional<String> header) {
      return header
          .map(String::trim)
          .map(value -> value.length() > 16 ? value.substring(0, 16) : value)
          .filter(value -> !value.isEmpty());
    }

    private static Optional<String> header(HttpResponse response, String name) {
      return response.getHeader(name).map(HttpHeader::value);
    }
  }
}
