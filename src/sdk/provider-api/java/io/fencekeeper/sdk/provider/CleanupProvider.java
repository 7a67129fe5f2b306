package io.fencekeeper.sdk.provider;

import java.util.Optional;

/**
 * A provider written in Java and loaded into a Fencekeeper node: the system that owns the cleanup
 * effect, behind the same three calls as provider protocol 1.1 ({@code docs/provider-protocol.md},
 * {@code docs/writing-a-provider.md}).
 *
 * <h2>Loading</h2>
 *
 * The operator puts the plugin's jar and the jars it needs in one directory and names the class
 * ({@code kind = java}, {@code class}, {@code path}, {@code settings { ... }}). The node loads it in
 * a class loader of its own over that directory, whose parent shows it the JDK and this package
 * only: a plugin brings every library it uses, and none of the node's (Pekko, Jackson, a JDBC
 * driver) is visible to it. The class must be public, implement this interface and have a public
 * constructor taking a {@link ProviderContext} or, failing that, none. A constructor that throws, a
 * class that cannot be found or does not implement this interface stops the node's start (exit 78,
 * one line naming the class and what went wrong). One instance serves every call of its provider
 * on that node.
 *
 * <h2>Threads and time</h2>
 *
 * Calls block: that is fine. They run on threads of the provider's own pool ({@code
 * fencekeeper-plugin-<name>-<n>}), never on the node's dispatcher, at most as many at once as the
 * provider's budget allows ({@code max-in-flight}) or, without a budget, as the node has workers;
 * calls beyond that wait in the pool's queue. Every method may be called from several threads at
 * once, for different items and for the same one, so an implementation must be thread-safe. Each
 * call has the provider's {@code request-timeout} (10 s by default), counted from when it was
 * asked: one still queued then is never started (nothing was sent: Fencekeeper retries later);
 * one still running is abandoned: its thread is interrupted and its answer, if it comes, is
 * ignored. An abandoned {@code apply} is ambiguous: Fencekeeper looks its key up once its deadline
 * (plus a clock-skew allowance) has passed, so an {@code apply} must either commit before its
 * {@link Cleanup#deadline()} or not at all.
 *
 * <h2>What each call may answer</h2>
 *
 * A method returns its answer or throws one of {@link ProviderFailure}'s kinds; it never returns
 * null. Anything else it throws, and a null, is a bug that Fencekeeper survives: an {@code apply}
 * is then ambiguous (looked up after its deadline), a {@code plan} or {@code lookup} is retried
 * later, and the node logs one line naming the class and what it did.
 */
public interface CleanupProvider extends AutoCloseable {

  /** The version of this API: a plugin built against 1.x runs on every node that loads 1.y ≥ x. */
  String API_VERSION = "1.0";

  /**
   * What this provider claims; asked once when it is loaded (and by the provider check), so it must
   * not change over the instance's life. A provider that claims a guarantee it does not keep is
   * found out by {@code fencekeeper provider-check} and the test kit.
   */
  Guarantees guarantees();

  /**
   * Read-only: what needs cleaning up for {@code item}. Safe to call any number of times; the same
   * answer while nothing changes at the provider (it may change once the effect is applied).
   *
   * @throws ProviderFailure Throttled, Transient or Permanent
   */
  Plan plan(Item item);

  /**
   * The mutation: applies {@code cleanup} once, under its idempotency key, or not at all. In order
   * (the order of protocol 1.1):
   *
   * <ol>
   *   <li>shedding load: {@link ProviderFailure.Throttled};
   *   <li>if it fences ({@link Guarantees#fences()}): a token lower than the highest seen under the
   *       key is {@link ProviderFailure.StaleToken}; otherwise the token raises that mark, even if
   *       this call fails afterwards;
   *   <li>another call with the key still in progress: {@link ProviderFailure.KeyInUse};
   *   <li>if it keeps keys: the key's effect exists with the same identity ({@link
   *       Cleanup#sameEffect}): {@link Receipt#replayed(String, java.time.Instant)} with the first
   *       effect's id and instant, nothing applied; with another identity: {@link
   *       ProviderFailure.KeyReused};
   *   <li>if it honours deadlines: the deadline has passed, or it cannot commit before it: {@link
   *       ProviderFailure.DeadlinePassed}, nothing applied;
   *   <li>apply and commit, recording the effect under the key so that {@link #lookup} finds it:
   *       {@link Receipt#applied(String, java.time.Instant)}.
   * </ol>
   *
   * A failure before the commit that leaves nothing applied is {@link ProviderFailure.Transient}
   * (or Permanent when retrying cannot help). When the call cannot tell whether it committed (the
   * commit's answer was lost), it must throw something that is not a {@link ProviderFailure} (the
   * driver's exception will do): Fencekeeper then reconciles with {@link #lookup}.
   */
  Receipt apply(Cleanup cleanup);

  /**
   * The effect committed under {@code idempotencyKey}, if there is one: what reconciliation trusts.
   * Present must mean the effect exists durably; empty must mean none was committed and none will
   * be (Fencekeeper asks only once every cleanup sent under the key is past its deadline). A
   * provider without keys of its own finds the key in a reference it stores with each effect.
   *
   * @throws ProviderFailure Throttled or Transient
   */
  Optional<Receipt> lookup(Item item, String idempotencyKey);

  /**
   * Releases what the provider holds (connections, threads) when its node stops; calls still in
   * flight may be abandoned. Bounded by the request timeout.
   */
  @Override
  default void close() {}
}
