package io.fencekeeper.provider.check;

import io.fencekeeper.provider.Provider;
import io.fencekeeper.provider.ProviderError;
import io.fencekeeper.provider.plugin.SdkMapping;
import io.fencekeeper.sdk.provider.Cleanup;
import io.fencekeeper.sdk.provider.Guarantees;
import io.fencekeeper.sdk.provider.Item;
import io.fencekeeper.sdk.provider.Plan;
import io.fencekeeper.sdk.provider.Receipt;
import io.fencekeeper.sdk.provider.check.AmbiguousAnswer;
import io.fencekeeper.sdk.provider.check.ProviderUnderCheck;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A provider of the SPI (the jdbc provider) as the checks call it: its typed errors become the
 * API's failures ({@link SdkMapping#failure}), a call past the patience is an {@link
 * AmbiguousAnswer}, and a cut-off is an apply whose stage nobody waits for.
 */
final class InternalUnderCheck implements ProviderUnderCheck {

  private final Provider provider;
  private final String description;
  private final Guarantees claims;
  private final String claimsSource;
  private final Duration patience;

  InternalUnderCheck(
      Provider provider,
      String description,
      Guarantees claims,
      String claimsSource,
      Duration patience) {
    this.provider = provider;
    this.description = description;
    this.claims = claims;
    this.claimsSource = claimsSource;
    this.patience = patience;
  }

  @Override
  public String description() {
    return description;
  }

  @Override
  public Guarantees claims() {
    return claims;
  }

  @Override
  public String claimsSource() {
    return claimsSource;
  }

  @Override
  public boolean comparesIdentityOnly() {
    return true;
  }

  @Override
  public Plan plan(Item item) {
    return SdkMapping.plan(await(provider.plan(SdkMapping.itemId(item)), "plan"));
  }

  @Override
  public Receipt apply(Cleanup cleanup) {
    return SdkMapping.receipt(await(provider.apply(SdkMapping.cleanup(cleanup)), "apply"));
  }

  @Override
  public Optional<Receipt> lookup(Item item, String idempotencyKey) {
    return await(provider.lookup(SdkMapping.itemId(item), idempotencyKey), "lookup")
        .map(SdkMapping::receipt);
  }

  @Override
  public Optional<CompletableFuture<Receipt>> applyAndAbandon(Cleanup cleanup) {
    CompletableFuture<Receipt> answer = new CompletableFuture<>();
    provider
        .apply(SdkMapping.cleanup(cleanup))
        .whenComplete(
            (receipt, failure) -> {
              if (failure == null) {
                answer.complete(SdkMapping.receipt(receipt));
              } else {
                answer.completeExceptionally(SdkMapping.failure(ProviderError.from(failure)));
              }
            });
    return Optional.of(answer);
  }

  @Override
  public void close() {
    provider.close();
  }

  private <T> T await(CompletionStage<T> stage, String method) {
    try {
      return stage.toCompletableFuture().get(patience.toMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      throw new AmbiguousAnswer(method + " gave no answer within " + patience.toMillis() + " ms");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AmbiguousAnswer(method + " was interrupted");
    } catch (ExecutionException e) {
      throw SdkMapping.failure(ProviderError.from(e));
    }
  }
}
