package io.fencekeeper.provider.http;

import static io.fencekeeper.provider.http.HttpProtocol.json;

import com.fasterxml.jackson.core.JsonProcessingException;
import io.fencekeeper.item.ItemId;
import io.fencekeeper.provider.Plan;
import io.fencekeeper.provider.Provider;
import io.fencekeeper.provider.ProviderError;
import io.fencekeeper.provider.ProviderException;
import io.fencekeeper.provider.Receipt;
import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;

/**
 * A provider reached over the documented HTTP protocol (docs/provider-protocol.md), on the JDK's
 * asynchronous {@link HttpClient}: no call ever blocks the caller's thread.
 *
 * <p>The one rule that matters most: once a mutation may have left this process, a failure is
 * {@link ProviderError.Ambiguous}, never a plain failure, because the provider may have applied it.
 */
public final class HttpProvider implements Provider {

  private static final Duration DEFAULT_RETRY_AFTER = Duration.ofSeconds(1);

  private final URI baseUrl;
  private final Duration requestTimeout;
  private final HttpClient client;
  private final AutoCloseable ownedResource;

  private HttpProvider(
      URI baseUrl, Duration connectTimeout, Duration requestTimeout, AutoCloseable ownedResource) {
    String url = baseUrl.toString();
    this.baseUrl = URI.create(url.endsWith("/") ? url.substring(0, url.length() - 1) : url);
    this.requestTimeout = requestTimeout;
    this.client =
        HttpClient.newBuilder()
            // the protocol is plain HTTP/1.1; no h2c upgrade dance on every connection
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(connectTimeout)
            .followRedirects(HttpClient.Redirect.NEVER)
            .build();
    this.ownedResource = ownedResource;
  }

  public static HttpProvider create(URI baseUrl, Duration connectTimeout, Duration requestTimeout) {
    return new HttpProvider(baseUrl, connectTimeout, requestTimeout, () -> {});
  }

  /** The same provider, which also closes {@code resource} (an embedded server) on close. */
  public HttpProvider closing(AutoCloseable resource) {
    return new HttpProvider(
        baseUrl, client.connectTimeout().orElseThrow(), requestTimeout, resource);
  }

  public URI baseUrl() {
    return baseUrl;
  }

  @Override
  public CompletionStage<Plan> plan(ItemId item) {
    URI uri = URI.create(baseUrl + HttpProtocol.planPath(item));
    HttpRequest request = get(uri);
    return send(request, false, response -> readOk(response, Plan.class, false));
  }

  @Override
  public CompletionStage<Receipt> apply(
      ItemId item, Plan plan, String idempotencyKey, long fencingToken) {
    byte[] body;
    try {
      body = json().writeValueAsBytes(HttpProtocol.CleanupRequest.of(item, plan));
    } catch (JsonProcessingException e) {
      // nothing has been sent yet, and a body that cannot be written never will be
      return CompletableFuture.failedFuture(
          new ProviderException(new ProviderError.Permanent("cannot encode cleanup: " + e), e));
    }
    HttpRequest request =
        HttpRequest.newBuilder(URI.create(baseUrl + HttpProtocol.CLEANUPS_PATH))
            .timeout(requestTimeout)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json")
            .header(HttpProtocol.IDEMPOTENCY_KEY, idempotencyKey)
            .header(HttpProtocol.FENCING_TOKEN, Long.toString(fencingToken))
            .POST(HttpRequest.BodyPublishers.ofByteArray(body))
            .build();
    return send(
        request,
        true,
        response -> {
          Receipt outcome = readOk(response, Receipt.class, true);
          boolean replayed =
              response
                  .headers()
                  .firstValue(HttpProtocol.IDEMPOTENT_REPLAYED)
                  .map("true"::equalsIgnoreCase)
                  .orElse(false);
          return replayed ? outcome.asReplay() : outcome;
        });
  }

  @Override
  public CompletionStage<Optional<Receipt>> lookup(ItemId item, String idempotencyKey) {
    URI uri = URI.create(baseUrl + HttpProtocol.CLEANUPS_PATH + "/" + pathSegment(idempotencyKey));
    return send(
        get(uri),
        false,
        response ->
            response.statusCode() == 404
                ? Optional.empty()
                : Optional.of(readOk(response, Receipt.class, false)));
  }

  @Override
  public void close() {
    try {
      ownedResource.close();
    } catch (Exception e) {
      throw new IllegalStateException("closing the provider's embedded resource failed", e);
    }
  }

  private HttpRequest get(URI uri) {
    return HttpRequest.newBuilder(uri)
        .timeout(requestTimeout)
        .header("Accept", "application/json")
        .GET()
        .build();
  }

  private <T> CompletionStage<T> send(
      HttpRequest request, boolean mutation, Function<HttpResponse<String>, T> onResponse) {
    return client
        .sendAsync(request, HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8))
        .handle(
            (response, failure) -> {
              if (failure != null) {
                Throwable cause = unwrap(failure);
                throw new ProviderException(classifyFailure(cause, mutation), cause);
              }
              return onResponse.apply(response);
            });
  }

  /**
   * A failure without a response. Only a failure to connect proves the request never left; any
   * later failure (request timeout, reset, EOF) on a mutation may have come after the provider
   * applied it.
   */
  static ProviderError classifyFailure(Throwable cause, boolean mutation) {
    if (causedBy(cause, HttpConnectTimeoutException.class)
        || causedBy(cause, ConnectException.class)) {
      return new ProviderError.Transient("could not connect to the provider: " + cause);
    }
    String what =
        cause instanceof java.net.http.HttpTimeoutException
            ? "no answer within the request timeout"
            : "connection failed after sending";
    return mutation
        ? new ProviderError.Ambiguous(what + " (the provider may have applied it): " + cause)
        : new ProviderError.Transient(what + ": " + cause);
  }

  /** Maps every non-2xx status as docs/provider-protocol.md prescribes. */
  private <T> T readOk(HttpResponse<String> response, Class<T> type, boolean mutation) {
    int status = response.statusCode();
    if (status == 200 || status == 201) {
      try {
        return json().readValue(response.body(), type);
      } catch (IOException e) {
        throw new ProviderException(
            mutation
                ? new ProviderError.Ambiguous("provider accepted but answered garbage: " + e)
                : new ProviderError.Transient("provider answered garbage: " + e),
            e);
      }
    }
    throw new ProviderException(classifyStatus(response, mutation));
  }

  static ProviderError classifyStatus(HttpResponse<String> response, boolean mutation) {
    int status = response.statusCode();
    HttpProtocol.ErrorBody body = errorBody(response);
    String detail = status + " " + body.error() + ": " + body.message();
    if (status == 429) {
      return new ProviderError.Throttled(retryAfter(response), detail);
    }
    if (status == 409 && HttpProtocol.STALE_TOKEN.equals(body.error())) {
      long presented =
          body.presentedToken() != null
              ? body.presentedToken()
              : response
                  .request()
                  .headers()
                  .firstValue(HttpProtocol.FENCING_TOKEN)
                  .map(Long::parseLong)
                  .orElse(-1L);
      long highest = body.highestToken() != null ? body.highestToken() : -1L;
      return new ProviderError.StaleToken(presented, highest);
    }
    if (status == 409 && HttpProtocol.KEY_IN_USE.equals(body.error())) {
      // the first request with this key is still being processed: nothing new was applied
      return new ProviderError.Transient(detail);
    }
    if (status == 408) {
      // the provider gave up reading the request, so it never processed it
      return new ProviderError.Transient(detail);
    }
    if (status >= 400 && status < 500) {
      return new ProviderError.Permanent(detail);
    }
    // 5xx (or anything unexpected): on a mutation the provider may have applied it before failing
    return mutation ? new ProviderError.Ambiguous(detail) : new ProviderError.Transient(detail);
  }

  private static HttpProtocol.ErrorBody errorBody(HttpResponse<String> response) {
    try {
      HttpProtocol.ErrorBody body = json().readValue(response.body(), HttpProtocol.ErrorBody.class);
      if (body != null && body.error() != null) {
        return body;
      }
    } catch (IOException | RuntimeException e) {
      // not the documented envelope (a proxy's HTML page, say): fall through to the status alone
    }
    String text = response.body() == null ? "" : response.body();
    return HttpProtocol.ErrorBody.of(
        "http_" + response.statusCode(), text.length() > 200 ? text.substring(0, 200) : text);
  }

  /**
   * {@code Retry-After-Ms} wins for sub-second precision; otherwise {@code Retry-After} in
   * delta-seconds or as an HTTP-date (RFC 9110 §10.2.3).
   */
  static Duration retryAfter(HttpResponse<?> response) {
    Optional<String> millis = response.headers().firstValue(HttpProtocol.RETRY_AFTER_MS);
    if (millis.isPresent()) {
      try {
        return Duration.ofMillis(Math.max(0, Long.parseLong(millis.get().trim())));
      } catch (NumberFormatException e) {
        // fall back to Retry-After
      }
    }
    Optional<String> header = response.headers().firstValue(HttpProtocol.RETRY_AFTER);
    if (header.isEmpty()) {
      return DEFAULT_RETRY_AFTER;
    }
    String value = header.get().trim();
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

  private static Throwable unwrap(Throwable failure) {
    Throwable cause = failure;
    while (cause instanceof CompletionException && cause.getCause() != null) {
      cause = cause.getCause();
    }
    return cause;
  }

  private static String pathSegment(String value) {
    return URLEncoder.encode(value, StandardCharsets.UTF_8).replace("+", "%20");
  }
}
