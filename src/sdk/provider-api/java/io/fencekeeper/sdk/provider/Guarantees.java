package io.fencekeeper.sdk.provider;

/**
 * What a provider claims beyond answering plan, apply and lookup (which every provider must). The
 * provider check ({@code fencekeeper provider-check}, and the test kit) proves each one claimed,
 * and says what Fencekeeper can promise without the ones that are not.
 *
 * @param fences refuses a fencing token lower than the highest it has seen under the key, with
 *     {@link ProviderFailure.StaleToken}, before anything else, and raises that mark with every
 *     request that passes the check, even one that fails afterwards. Without it, a worker paused
 *     past its lease is stopped by the lease alone
 * @param keepsKeys a repeat of a key whose effect exists applies nothing and answers the first
 *     effect ({@link Receipt#replayed()}), for as long as a run lasts, and two applies of one key at
 *     once make one effect (the second waits or fails with {@link ProviderFailure.KeyInUse}).
 *     Without it, reconciliation by lookup is all that stands between a retry and a second effect
 * @param honoursDeadline never commits a cleanup at or after its {@link Cleanup#deadline()}: one
 *     that cannot commit before it commits nothing ({@link ProviderFailure.DeadlinePassed}). Without
 *     it, a lookup after an ambiguous cleanup may miss an effect that commits later
 */
public record Guarantees(boolean fences, boolean keepsKeys, boolean honoursDeadline) {

  /** All three: what a provider should aim for. */
  public static final Guarantees ALL = new Guarantees(true, true, true);

  /** None beyond answering: the lease and reconciliation alone protect. */
  public static final Guarantees NONE = new Guarantees(false, false, false);
}
