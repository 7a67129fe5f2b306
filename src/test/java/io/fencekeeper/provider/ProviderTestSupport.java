package io.fencekeeper.provider;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import io.fencekeeper.item.ItemId;
import io.fencekeeper.provider.http.HttpProtocol;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/** Shared helpers: waiting on stages and conditions with a deadline, and raw protocol calls. */
public final class ProviderTestSupport {

  public static final LocalDate BUSINESS_DATE = LocalDate.of(2026, 11, 29);
  private static final Duration STAGE_DEADLINE = Duration.ofSeconds(15);
  private static final HttpClient RAW = HttpClient.newHttpClient();

  private ProviderTestSupport() {}

  public static ItemId item(String accountId) {
    return ItemId.of("payment-reconciliation", BUSINESS_DATE, accountId, "c-1");
  }

  public static Plan writeOff(long amountMinor) {
    return Plan.action("write-off-residual", amountMinor, "write off " + amountMinor);
  }

  /** A cleanup of {@code item} whose deadline is a minute away: far beyond any call in a test. */
  public static Cleanup cleanup(ItemId item, Plan plan, String idempotencyKey, long fencingToken) {
    return new Cleanup(item, plan, idempotencyKey, fencingToken, Instant.now().plusSeconds(60));
  }

  /**
   * The body of {@code POST /v1/cleanups} as a Fencekeeper node of protocol 1.0 sent it: its eight
   * fields in their order, and no currency.
   */
  public static Map<String, Object> bodyOf10(ItemId item, Plan plan) {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("itemId", item.value());
    body.put("job", item.job());
    body.put("businessDate", item.businessDate().toString());
    body.put("accountId", item.accountId());
    body.put("cursor", item.cursor());
    body.put("action", plan.action());
    body.put("amountMinor", plan.amountMinor());
    body.put("description", plan.description());
    return body;
  }

  /** The stage's value, failing the test if it failed or did not finish in time. */
  public static <T> T result(CompletionStage<T> stage) {
    try {
      return stage.toCompletableFuture().get(STAGE_DEADLINE.toMillis(), TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      throw new AssertionError(
          "expected success but the provider failed with " + ProviderError.from(e), e);
    } catch (InterruptedException | TimeoutException e) {
      throw new AssertionError("provider stage did not complete within " + STAGE_DEADLINE, e);
    }
  }

  /** The typed error the stage failed with, failing the test if it succeeded. */
  public static ProviderError failure(CompletionStage<?> stage) {
    Object value;
    try {
      value = stage.toCompletableFuture().get(STAGE_DEADLINE.toMillis(), TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      return ProviderError.from(e);
    } catch (InterruptedException | TimeoutException e) {
      throw new AssertionError("provider stage did not complete within " + STAGE_DEADLINE, e);
    }
    throw new AssertionError("expected a provider failure but got " + value);
  }

  /** Waits until {@code condition} holds, or fails after {@code deadline}. */
  public static void awaitCondition(Duration deadline, BooleanSupplier condition, String what) {
    long end = System.nanoTime() + deadline.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > end) {
        fail("timed out after " + deadline + " waiting until " + what);
      }
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
    }
  }

  public static HttpResponse<String> raw(URI baseUrl, String method, String path, String body) {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(baseUrl.resolve(path)).timeout(Duration.ofSeconds(10));
    if (body != null) {
      request.header("Content-Type", "application/json");
    }
    request.method(
        method,
        body == null
            ? HttpRequest.BodyPublishers.noBody()
            : HttpRequest.BodyPublishers.ofString(body));
    try {
      return RAW.send(request.build(), HttpResponse.BodyHandlers.ofString());
    } catch (Exception e) {
      throw new AssertionError(method + " " + path + " failed", e);
    }
  }

  /** {@code GET /ledger} as JSON. */
  public static JsonNode ledger(URI baseUrl) {
    try {
      return HttpProtocol.json().readTree(raw(baseUrl, "GET", "/ledger", null).body());
    } catch (Exception e) {
      throw new AssertionError("GET /ledger did not answer JSON", e);
    }
  }

  /** {@code GET /ledger}, answered 200: the applied effects per idempotency key. */
  public static Map<String, Integer> effectsPerKey(URI baseUrl) throws Exception {
    HttpResponse<String> response = raw(baseUrl, "GET", "/ledger", null);
    assertEquals(200, response.statusCode());
    Map<String, Integer> counts = new TreeMap<>();
    HttpProtocol.json()
        .readTree(response.body())
        .get("effects")
        .fields()
        .forEachRemaining(e -> counts.put(e.getKey(), e.getValue().asInt()));
    return counts;
  }
}
