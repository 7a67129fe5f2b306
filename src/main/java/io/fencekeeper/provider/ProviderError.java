package io.fencekeeper.provider;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonSubTypes;
import com.fasterxml.jackson.annotation.JsonTypeInfo;
import io.fencekeeper.CborSerializable;
import java.time.Duration;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/**
 * Why a provider call failed. The set is closed so that a {@code switch} in the worker is checked
 * by the compiler: every kind of failure has exactly one handling rule.
 *
 * <p>Journaled as a named type ({@code "type": "throttled"}), never by Java class name.
 */
@JsonTypeInfo(use = JsonTypeInfo.Id.NAME, property = "type")
@JsonSubTypes({
  @JsonSubTypes.Type(value = ProviderError.Throttled.class, name = "throttled"),
  @JsonSubTypes.Type(value = ProviderError.Transient.class, name = "transient"),
  @JsonSubTypes.Type(value = ProviderError.Permanent.class, name = "permanent"),
  @JsonSubTypes.Type(value = ProviderError.Ambiguous.class, name = "ambiguous"),
  @JsonSubTypes.Type(value = ProviderError.StaleToken.class, name = "stale_token")
})
public sealed interface ProviderError extends CborSerializable {

  /** A human sentence for logs and the audit trail. */
  String message();

  /** The provider is shedding load: retry after {@code retryAfter}, and reduce concurrency. */
  record Throttled(Duration retryAfter, String message) implements ProviderError {}

  /**
   * Nothing was applied by this request (it never reached the effect: not sent, refused before
   * applying, a key still in flight, a deadline that passed first): safe to retry later with the
   * same key and token.
   */
  record Transient(String message) implements ProviderError {}

  /** Retrying will not help: bad request, unknown account, key reused with a different body. */
  record Permanent(String message) implements ProviderError {}

  /**
   * The provider may or may not have applied the effect (timeout or reset after sending, 5xx after
   * accept). Must be reconciled with {@code lookup} before any new {@code apply}.
   */
  record Ambiguous(String message) implements ProviderError {}

  /**
   * The provider refused a fencing token lower than the highest it has seen for this key: the
   * caller has lost its lease and must stop, not retry.
   */
  record StaleToken(long presented, long highestSeen) implements ProviderError {
    @Override
    @JsonIgnore
    public String message() {
      return "provider refused fencing token "
          + presented
          + ": it has already seen token "
          + highestSeen
          + " for this key";
    }
  }

  /**
   * The typed error behind a failed stage: unwraps {@link CompletionException} and {@link
   * ExecutionException}. A failure that is not a {@link ProviderException} comes from a bug or an
   * unexpected library error somewhere between send and receive, so nobody can say whether the
   * effect happened: it is {@link Ambiguous}, which is always safe because it forces a lookup.
   */
  static ProviderError from(Throwable failure) {
    Throwable cause = failure;
    while ((cause instanceof CompletionException || cause instanceof ExecutionException)
        && cause.getCause() != null) {
      cause = cause.getCause();
    }
    if (cause instanceof ProviderException providerException) {
      return providerException.error();
    }
    return new Ambiguous("unexpected provider failure: " + cause);
  }
}
