package io.fencekeeper.sdk.provider.check;

import io.fencekeeper.sdk.provider.Cleanup;
import io.fencekeeper.sdk.provider.Guarantees;
import io.fencekeeper.sdk.provider.Item;
import io.fencekeeper.sdk.provider.Plan;
import io.fencekeeper.sdk.provider.Receipt;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * A provider as the checks call it, whatever it is behind: a Java plugin in this process, an http
 * provider of protocol 1.x, the jdbc provider. Each call answers, or throws a {@link
 * io.fencekeeper.sdk.provider.ProviderFailure} (the provider's answer), an {@link
 * AmbiguousAnswer} (no clear answer: nobody knows whether a cleanup applied) or an {@link
 * UnreadableAnswer} (an answer that cannot be read).
 */
public interface ProviderUnderCheck extends AutoCloseable {

  /** What is checked, for the report: "java plugin com.acme.Ledger", "http http://.../". */
  String description();

  /** What the provider claims. */
  Guarantees claims();

  /** Where the claims come from: "declared by the plugin", "GET /v1/guarantees", .... */
  String claimsSource();

  /**
   * Whether a repeat that differs from the first cleanup only outside the effect's identity (its
   * description) must replay: protocol 1.1 and the Java API; a 1.0 provider compares every field.
   */
  boolean comparesIdentityOnly();

  Plan plan(Item item);

  Receipt apply(Cleanup cleanup);

  Optional<Receipt> lookup(Item item, String idempotencyKey);

  /**
   * Sends {@code cleanup} and abandons the call once it is on its way: over http the request is
   * written and the connection closed before the answer; in process the call is started and not
   * waited for. Returns the abandoned call's own answer when it can be known later (in process),
   * else empty.
   */
  Optional<CompletableFuture<Receipt>> applyAndAbandon(Cleanup cleanup);

  @Override
  default void close() {}
}
