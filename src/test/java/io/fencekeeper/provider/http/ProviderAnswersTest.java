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
        7);
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
