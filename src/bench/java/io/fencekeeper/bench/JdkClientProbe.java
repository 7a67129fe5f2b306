package io.fencekeeper.bench;

import io.fencekeeper.item.ItemId;
import io.fencekeeper.provider.Cleanup;
import io.fencekeeper.provider.Plan;
import io.fencekeeper.provider.Provider;
import io.fencekeeper.provider.ProviderError;
import io.fencekeeper.provider.ProviderException;
import io.fencekeeper.provider.Receipt;
import io.fencekeeper.provider.http.HttpProtocol;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletionStage;

/**
 * A measurement of issue 38's decision 4, not a product path: the provider protocol's three calls
 * on the JDK's {@link HttpClient} instead of Pekko HTTP's pool, so that the bench can say what the
 * client costs per call ({@code --provider-client jdk}). It has none of the product client's
 * guarantees: no connection cap of its own (the workers bound the calls), no body limit, no
 * keep-alive shorter than the provider's, and any non-2xx answer or failure is one Ambiguous or
 * Transient error; against the fault-free sim of the comparison none of that is exercised.
 */
final class JdkClientProbe implements Provider {

  private static final Duration TIMEOUT = Duration.ofSeconds(30);

  private final HttpClient http;
  private final String base;

  /**
   * {@code direct}: the client's own tasks and the answers' continuations run on its selector
   * thread (the fewest thread hops a JDK client can make); otherwise on the JDK's default executor,
   * a cached pool of its own.
   */
  JdkClientProbe(URI baseUrl, boolean direct) {
    String url = baseUrl.toString();
    this.base = url.endsWith("/") ? url.substring(0, url.length() - 1) : url;
    HttpClient.Builder builder =
        HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5));
    if (direct) {
      builder.executor(Runnable::run);
    }
    this.http = builder.build();
  }

  @Override
  public CompletionStage<Plan> plan(ItemId item) {
    HttpRequest request =
        HttpRequest.newBuilder(URI.create(base + HttpProtocol.planPath(item)))
            .timeout(TIMEOUT)
            .header("Accept", "application/json")
            .build();
    return http.sendAsync(request, HttpResponse.BodyHandlers.ofByteArray())
        .thenApply(answer -> read(answer, Plan.class, false));
  }

  @Override
  public CompletionStage<Receipt> apply(Cleanup cleanup) {
    String idempotencyKey = cleanup.idempotencyKey();
    byte[] body;
    try {
      body =
          HttpProtocol.json()
              .writeValueAsBytes(HttpProtocol.CleanupRequest.of(cleanup.item(), cleanup.plan()));
    } catch (IOException e) {
      throw new ProviderException(new ProviderError.Transient("cannot encode: " + e), e);
    }
    HttpRequest request =
        HttpRequest.newBuilder(URI.create(base + HttpProtocol.CLEANUPS_PATH))
            .timeout(TIMEOUT)
            .header("Accept", "application/json")
            .header("Content-Type", "application/json")
            .header(HttpProtocol.IDEMPOTENCY_KEY, idempotencyKey)
            .header(HttpProtocol.PROTOCOL, HttpProtocol.VERSION_1_1)
            .header(HttpProtocol.FENCING_TOKEN, Long.toString(cleanup.fencingToken()))
            .header(
                HttpProtocol.CLEANUP_DEADLINE, HttpProtocol.formatDeadline(cleanup.deadline()))
            .POST(HttpRequest.BodyPublishers.ofByteArray(body))
            .build();
    return http.sendAsync(request, HttpResponse.BodyHandlers.ofByteArray())
        .thenApply(
            answer -> {
              Receipt receipt = read(answer, Receipt.class, true);
              // 200 is a replay, 201 applied now (docs/provider-protocol.md)
              return answer.statusCode() == 200 ? receipt.asReplay() : receipt;
            });
  }

  @Override
  public CompletionStage<Optional<Receipt>> lookup(ItemId item, String idempotencyKey) {
    String key = URLEncoder.encode(idempotencyKey, StandardCharsets.UTF_8).replace("+", "%20");
    HttpRequest request =
        HttpRequest.newBuilder(URI.create(base + HttpProtocol.CLEANUPS_PATH + "/" + key))
            .timeout(TIMEOUT)
            .header("Accept", "application/json")
            .build();
    return http.sendAsync(request, HttpResponse.BodyHandlers.ofByteArray())
        .thenApply(
            answer ->
                answer.statusCode() == 404
                    ? Optional.empty()
                    : Optional.of(read(answer, Receipt.class, false)));
  }

  private static <T> T read(HttpResponse<byte[]> answer, Class<T> type, boolean mutation) {
    int status = answer.statusCode();
    if (status == 200 || status == 201) {
      try {
        return HttpProtocol.json().readValue(answer.body(), type);
      } catch (IOException e) {
        throw failure(mutation, "garbage: " + e);
      }
    }
    throw failure(mutation, "status " + status);
  }

  private static ProviderException failure(boolean mutation, String what) {
    return new ProviderException(
        mutation ? new ProviderError.Ambiguous(what) : new ProviderError.Transient(what));
  }

  @Override
  public void close() {
    // the JDK 17 client has no close: its selector thread ends when the client is collected
  }
}
