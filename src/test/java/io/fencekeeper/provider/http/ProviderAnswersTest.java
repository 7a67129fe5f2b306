package io.fencekeeper.provider.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fencekeeper.provider.ProviderError;
import io.fencekeeper.provider.ProviderException;
import io.fencekeeper.provider.Receipt;
import java.net.ConnectException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.Optional;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeoutException;
import org.apache.pekko.stream.BufferOverflowException;
import org.junit.jupiter.api.Test;

/**
 * The answers the provider's HTTP server never gives in {@code HttpProviderErrorMappingTest}: what
 * a proxy in front of it, a malformed header, a full queue or a silent connection mean, decided
 * without a server.
 */
class ProviderAnswersTest {

  private static ProviderAnswers.Answer answer(int status, String body) {
    return answer(status, body, Optional.empty(), Optional.empty());
  }

  private static ProviderAnswers.Answer answer(
      int status, String body, Optional<String> retryAfter, Optional<String> retryAfterMs) {
    return new ProviderAnswers.Answer(
        status,
        body == null ? null : body.getBytes(StandardCharsets.UTF_8),
        body == null ? "a body that did not arrive within the request timeout" : null,
        retryAfter,
        retryAfterMs,
        "1.1",
        true,
        "1.1",
        7);
  }

  /** An answer with or without the version header, to a client that knew {@code known}. */
  private static ProviderAnswers.Answer versioned(
      int status, String body, String header, String known) {
    return new ProviderAnswers.Answer(
        status,
        body.getBytes(StandardCharsets.UTF_8),
        null,
        Optional.empty(),
        Optional.empty(),
        header == null ? "1.0" : header,
        header != null,
        known,
        -1);
  }

  private static final String NOT_FOUND = "{\"error\":\"not_found\",\"message\":\"m\"}";

  /**
   * A lookup's 404 is "not applied" only as the protocol says it: the envelope with not_found, and
   * the version header from a server known as 1.1. A proxy's page, a 404 of a wrong path prefix or
   * another code is Transient, never "not applied" (which would send the cleanup again).
   */
  @Test
  void onlyTheProtocolsNotFoundIsNotAppliedAndEveryOther404IsTransient() {
    assertEquals(
        Optional.empty(), ProviderAnswers.readLookup(versioned(404, NOT_FOUND, "1.1", "1.1"), "k"));
    assertEquals(
        Optional.empty(),
        ProviderAnswers.readLookup(versioned(404, NOT_FOUND, null, "1.0"), "k"),
        "a 1.0 server sends no header");
    assertEquals(
        Optional.empty(),
        ProviderAnswers.readLookup(versioned(404, NOT_FOUND, null, null), "k"),
        "nothing known yet: the envelope decides");
    for (var other :
        java.util.List.of(
            versioned(404, NOT_FOUND, null, "1.1"),
            versioned(404, "<html>Not Found</html>", null, null),
            versioned(404, "", "1.1", "1.1"),
            versioned(404, "{\"error\":\"unknown_endpoint\",\"message\":\"m\"}", "1.1", "1.1"),
            versioned(404, "{\"message\":\"Not Found\"}", null, "1.0"))) {
      ProviderException thrown =
          assertThrows(ProviderException.class, () -> ProviderAnswers.readLookup(other, "k"));
      assertInstanceOf(ProviderError.Transient.class, thrown.error(), new String(other.body()));
    }
  }

  /**
   * The client's idea of the server's version moves only with the server's own answers: one with
   * the header, or a 2xx JSON object or the envelope without it (1.0). A proxy's page, an HTTP
   * stack's bare error, or a headerless 404 at a 1.1 server leave it as it was.
   */
  @Test
  void onlyTheServersOwnAnswersChangeTheVersionTheClientKnows() {
    assertEquals(
        Optional.of("1.1"), ProviderAnswers.versionAfter(versioned(502, "", "1.1", "1.0")));
    assertEquals(
        Optional.of("1.0"), ProviderAnswers.versionAfter(versioned(200, "{}", null, "1.1")));
    assertEquals(
        Optional.of("1.0"),
        ProviderAnswers.versionAfter(versioned(409, "{\"error\":\"x\"}", null, "1.1")));
    assertEquals(
        Optional.empty(), ProviderAnswers.versionAfter(versioned(502, "<html/>", null, "1.1")));
    assertEquals(
        Optional.empty(), ProviderAnswers.versionAfter(versioned(400, "Illegal", null, "1.1")));
    assertEquals(
        Optional.empty(), ProviderAnswers.versionAfter(versioned(200, "<html/>", null, "1.1")));
    assertEquals(
        Optional.empty(), ProviderAnswers.versionAfter(versioned(404, NOT_FOUND, null, "1.1")));
    assertEquals(
        Optional.of("1.0"), ProviderAnswers.versionAfter(versioned(404, NOT_FOUND, null, null)));
  }

  @Test
  void aProxysErrorPageOnAnApplyIsAmbiguousAndNamesTheStatusWithoutTheWholePage() {
    String page = "<html>" + "x".repeat(5000) + "</html>";
    ProviderError error = ProviderAnswers.classifyStatus(answer(502, page), true);
    ProviderError.Ambiguous ambiguous = assertInstanceOf(ProviderError.Ambiguous.class, error);
    assertTrue(ambiguous.message().startsWith("502 http_502: <html>"), ambiguous.message());
    assertTrue(ambiguous.message().length() < 300, "the page is cut: " + ambiguous.message());
    // the same page on a read: nothing was applied, so it is only worth trying again
    assertInstanceOf(
        ProviderError.Transient.class, ProviderAnswers.classifyStatus(answer(502, page), false));
  }

  @Test
  void anAcceptedApplyWhoseBodyNeverCameIsAmbiguousAndAReadOfItIsTransient() {
    ProviderException apply =
        assertThrows(
            ProviderException.class,
            () -> ProviderAnswers.readOk(answer(201, null), Receipt.class, true));
    assertInstanceOf(ProviderError.Ambiguous.class, apply.error());
    ProviderException read =
        assertThrows(
            ProviderException.class,
            () -> ProviderAnswers.readOk(answer(200, "not json"), Receipt.class, false));
    assertInstanceOf(ProviderError.Transient.class, read.error());
  }

  @Test
  void retryAfterTakesMillisFirstThenSecondsThenADateAndOtherwiseASecond() {
    assertEquals(
        Duration.ofMillis(250),
        ProviderAnswers.retryAfter(answer(429, "{}", Optional.of("9"), Optional.of("250"))));
    assertEquals(
        Duration.ofSeconds(9),
        ProviderAnswers.retryAfter(answer(429, "{}", Optional.of("9"), Optional.of("soon"))));
    String past =
        DateTimeFormatter.RFC_1123_DATE_TIME.format(
            ZonedDateTime.now(ZoneOffset.UTC).minusMinutes(5));
    assertEquals(
        Duration.ZERO,
        ProviderAnswers.retryAfter(answer(429, "{}", Optional.of(past), Optional.empty())));
    assertEquals(
        Duration.ofSeconds(1),
        ProviderAnswers.retryAfter(answer(429, "{}", Optional.of("later"), Optional.empty())));
    assertEquals(
        Duration.ZERO,
        ProviderAnswers.retryAfter(answer(429, "{}", Optional.of("-5"), Optional.empty())));
  }

  @Test
  void onlyAFailureBeforeSendingIsSafeForAnApply() {
    assertInstanceOf(
        ProviderError.Transient.class,
        ProviderAnswers.classifyFailure(new ConnectException("refused"), true));
    assertInstanceOf(
        ProviderError.Transient.class,
        ProviderAnswers.classifyFailure(new BufferOverflowException("queue full"), true));
    Throwable silent =
        ProviderAnswers.unwrap(new CompletionException(new TimeoutException("idle")));
    ProviderError apply = ProviderAnswers.classifyFailure(silent, true);
    assertInstanceOf(ProviderError.Ambiguous.class, apply);
    assertTrue(
        ((ProviderError.Ambiguous) apply).message().startsWith("no answer within"),
        apply.toString());
    assertInstanceOf(ProviderError.Transient.class, ProviderAnswers.classifyFailure(silent, false));
    assertInstanceOf(
        ProviderError.Ambiguous.class,
        ProviderAnswers.classifyFailure(new IllegalStateException("reset by peer"), true));
  }

  @Test
  void aStaleTokenAnswerWithoutTokensInItsBodyNamesTheTokenTheRequestCarried() {
    ProviderError error =
        ProviderAnswers.classifyStatus(
            answer(409, "{\"error\":\"stale_token\",\"message\":\"lower\"}"), true);
    ProviderError.StaleToken stale = assertInstanceOf(ProviderError.StaleToken.class, error);
    assertEquals(7, stale.presented());
    assertEquals(-1, stale.highestSeen());
  }
}
