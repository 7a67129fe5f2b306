package io.fencekeeper.sdk.provider.check;

import io.fencekeeper.sdk.provider.Guarantees;

/**
 * What the provider check proves, in the order it reports them; the first broken one names a
 * failed check. Each says what Fencekeeper can promise when it holds, and what is left when the
 * provider does not claim it (or breaks it).
 */
public enum Guarantee {
  READABLE(
      "readable answers",
      "every answer is understood: no item fails or goes ambiguous for a garbled answer",
      "answers it cannot read are ambiguous (cleanups) or retried (reads): reconciliation still"
          + " holds, but the provider is not speaking the protocol"),
  REPLAY(
      "repeated key replays",
      "a retry, a resume or another node repeating a cleanup never applies it twice",
      "only reconciliation by lookup stands between a retried cleanup and a second effect"),
  CONCURRENT_APPLY(
      "one effect at once",
      "two workers sending one cleanup at the same moment make one effect",
      "two workers sending one cleanup at the same moment may make two effects: the lease and"
          + " fencing must keep them apart"),
  LOOKUP(
      "lookup",
      "an ambiguous cleanup is settled by looking its key up, never by guessing",
      "an ambiguous cleanup cannot be settled: it may be applied twice or never"),
  CUT_OFF(
      "cut off after send",
      "a cleanup whose answer was lost is found by lookup after its deadline, or applied once",
      "a cleanup whose answer was lost may be missed by lookup and applied again"),
  FENCING(
      "stale token refused",
      "a worker paused past its lease is refused by the provider itself",
      "the lease alone protects: a worker paused past its lease (a GC pause, a frozen VM) between"
          + " its lease check and the send may still commit its cleanup"),
  DEADLINE(
      "deadline honoured",
      "a lookup after a cleanup's deadline is final: no late commit follows it",
      "a lookup after the deadline may miss an effect that commits later; with keys kept the next"
          + " apply replays it, without them it may apply twice"),
  THROTTLING(
      "throttling read",
      "a throttled answer's Retry-After is waited for and the provider's budget lowered",
      "a throttled answer Fencekeeper cannot read is retried after 1 s");

  private final String title;
  private final String promise;
  private final String withoutIt;

  Guarantee(String title, String promise, String withoutIt) {
    this.title = title;
    this.promise = promise;
    this.withoutIt = withoutIt;
  }

  /** Its name in the report and in {@code --json}: {@code cut-off}, {@code concurrent-apply}. */
  public String id() {
    return name().toLowerCase(java.util.Locale.ROOT).replace('_', '-');
  }

  public String title() {
    return title;
  }

  /** What Fencekeeper can promise with a provider that keeps it. */
  public String promise() {
    return promise;
  }

  /** What is left when the provider does not claim it, or breaks it. */
  public String withoutIt() {
    return withoutIt;
  }

  /**
   * Whether a provider claiming {@code claims} claims this one: answers, lookup, the cut-off and
   * throttling belong to every provider; the rest to the guarantee that carries them.
   */
  public boolean claimedBy(Guarantees claims) {
    return switch (this) {
      case REPLAY, CONCURRENT_APPLY -> claims.keepsKeys();
      case FENCING -> claims.fences();
      case DEADLINE -> claims.honoursDeadline();
      case READABLE, LOOKUP, CUT_OFF, THROTTLING -> true;
    };
  }
}
