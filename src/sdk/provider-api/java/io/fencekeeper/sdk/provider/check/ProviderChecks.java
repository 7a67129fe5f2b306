package io.fencekeeper.sdk.provider.check;

import io.fencekeeper.sdk.provider.Cleanup;
import io.fencekeeper.sdk.provider.Guarantees;
import io.fencekeeper.sdk.provider.Item;
import io.fencekeeper.sdk.provider.Plan;
import io.fencekeeper.sdk.provider.ProviderFailure;
import io.fencekeeper.sdk.provider.Receipt;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.HexFormat;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * The checks of {@code fencekeeper provider-check} and the test kit: the ugly transitions a night
 * goes through, run directly against a provider on accounts that are safe to touch. Each
 * guarantee the provider claims is probed with real cleanups under keys of this run's own ({@code
 * pc-<runId>-<check>} jobs); one it does not claim is not probed (no effect is spent on it) and the
 * report says what is left without it. An unreadable answer anywhere breaks "readable answers";
 * throttled answers are waited for wherever they come and reported under "throttling read".
 */
public final class ProviderChecks {

  /** The guarantees probed by cleanups, in the order they run. */
  static final List<Guarantee> PROBED =
      List.of(
          Guarantee.REPLAY,
          Guarantee.CONCURRENT_APPLY,
          Guarantee.LOOKUP,
          Guarantee.CUT_OFF,
          Guarantee.FENCING,
          Guarantee.DEADLINE);

  /** How far in the past the deadline of the cleanup that must not commit is. */
  static final Duration PAST_DEADLINE = Duration.ofSeconds(60);

  private static final int MAX_THROTTLED_IN_A_ROW = 20;
  private static final Duration LONGEST_THROTTLE_WAIT = Duration.ofSeconds(5);
  private static final int TRANSIENT_RETRIES = 3;
  private static final Duration TRANSIENT_PAUSE = Duration.ofMillis(300);

  private final ProviderUnderCheck provider;
  private final List<CheckAccount> accounts;
  private final CheckSettings settings;
  private final Consumer<String> progress;
  private final Guarantees claims;

  private final List<String> unreadable = Collections.synchronizedList(new ArrayList<>());
  private final List<Duration> throttles = Collections.synchronizedList(new ArrayList<>());
  private final List<String> unreadableThrottles = Collections.synchronizedList(new ArrayList<>());
  private final AtomicInteger answers = new AtomicInteger();
  private int nextAccount;

  private ProviderChecks(
      ProviderUnderCheck provider,
      List<CheckAccount> accounts,
      CheckSettings settings,
      Consumer<String> progress) {
    if (accounts.isEmpty()) {
      throw new IllegalArgumentException("the checks need at least one account safe to touch");
    }
    this.provider = provider;
    this.accounts = List.copyOf(accounts);
    this.settings = settings;
    this.progress = progress;
    this.claims = provider.claims();
  }

  /**
   * Runs every check against {@code provider} on {@code accounts}; {@code progress} hears a line
   * as each one starts and ends.
   */
  public static CheckReport run(
      ProviderUnderCheck provider,
      List<CheckAccount> accounts,
      CheckSettings settings,
      Consumer<String> progress) {
    return new ProviderChecks(provider, accounts, settings, progress).run();
  }

  /**
   * The idempotency key Fencekeeper derives from an item: {@code fk-} and the first 16 bytes of
   * the SHA-256 of its id, in hex.
   */
  public static String keyOf(Item item) {
    try {
      byte[] digest =
          MessageDigest.getInstance("SHA-256")
              .digest(item.value().getBytes(StandardCharsets.UTF_8));
      return "fk-" + HexFormat.of().formatHex(digest, 0, 16);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is part of every JDK", e);
    }
  }

  private CheckReport run() {
    Map<Guarantee, CheckResult> results = new EnumMap<>(Guarantee.class);
    for (Guarantee guarantee : PROBED) {
      if (!guarantee.claimedBy(claims)) {
        results.put(
            guarantee,
            new CheckResult(
                guarantee,
                false,
                Verdict.NOT_CLAIMED,
                "not claimed (" + provider.claimsSource() + "): not probed"));
        continue;
      }
      progress.accept("checking " + guarantee.id() + ": " + guarantee.title());
      CheckResult result = probe(guarantee);
      progress.accept("  " + result.verdict().name().toLowerCase(java.util.Locale.ROOT));
      results.put(guarantee, result);
    }
    results.put(Guarantee.READABLE, readable());
    results.put(Guarantee.THROTTLING, throttling());
    return new CheckReport(
        provider.description(),
        claims,
        provider.claimsSource(),
        settings.runId(),
        settings.businessDate(),
        new ArrayList<>(results.values()));
  }

  private CheckResult probe(Guarantee guarantee) {
    try {
      String seen =
          switch (guarantee) {
            case REPLAY -> replay();
            case CONCURRENT_APPLY -> concurrentApply();
            case LOOKUP -> lookup();
            case CUT_OFF -> cutOff();
            case FENCING -> fencing();
            case DEADLINE -> deadline();
            case READABLE, THROTTLING -> throw new IllegalArgumentException(guarantee.id());
          };
      return new CheckResult(guarantee, true, Verdict.HOLDS, seen);
    } catch (Broken broken) {
      return new CheckResult(guarantee, true, Verdict.BROKEN, broken.getMessage());
    } catch (Inconclusive unknown) {
      return new CheckResult(guarantee, true, Verdict.INCONCLUSIVE, unknown.getMessage());
    } catch (UnreadableAnswer e) {
      return inconclusive(guarantee, "an answer could not be read: " + e.getMessage());
    } catch (AmbiguousAnswer e) {
      return inconclusive(guarantee, "no clear answer: " + e.getMessage());
    } catch (ProviderFailure e) {
      return inconclusive(guarantee, "the provider refused: " + kind(e) + ": " + e.getMessage());
    } catch (RuntimeException e) {
      return inconclusive(guarantee, "the check failed: " + e);
    }
  }

  private static CheckResult inconclusive(Guarantee guarantee, String why) {
    return new CheckResult(guarantee, true, Verdict.INCONCLUSIVE, why);
  }

  // --- the checks ----------------------------------------------------------------------------

  /** A repeat of a key replays the first effect: by the same claim, and by a newer one. */
  private String replay() {
    Planned p = planned("replay");
    Receipt first = applyOk(p, p.plan(), 1);
    if (first.replayed()) {
      throw new Broken(
          "the first apply of the fresh key "
              + p.key()
              + " answered a replay of effect "
              + first.effectId());
    }
    expectReplay(first, applyOk(p, p.plan(), 1), "a repeat of the same cleanup (same token)");
    Plan reworded = p.plan();
    String newer = "a repeat from a newer claim (token 2)";
    if (provider.comparesIdentityOnly()) {
      reworded =
          new Plan(
              false,
              reworded.action(),
              reworded.amountMinor(),
              reworded.currency(),
              reworded.description() + " (asked again)");
      newer += " with another description";
    }
    Receipt again;
    try {
      again = applyOk(p, reworded, 2);
    } catch (ProviderFailure.KeyReused e) {
      throw new Broken(
          newer
              + " was refused as key reused: only item, action, amount and currency are the"
              + " effect's identity (protocol 1.1)");
    }
    expectReplay(first, again, newer);
    return "3 applies of key "
        + p.key()
        + ": one effect ("
        + first.effectId()
        + "), then 2 replays of it";
  }

  private static void expectReplay(Receipt first, Receipt again, String what) {
    if (!again.effectId().equals(first.effectId())) {
      throw new Broken(
          what
              + " applied it again: effect "
              + again.effectId()
              + " beside "
              + first.effectId());
    }
    if (!again.replayed()) {
      throw new Broken(
          what + " answered as applied now, not as a replay of effect " + first.effectId());
    }
  }

  /** N applies of one key at the same moment, then one more: one effect among them all. */
  private String concurrentApply() {
    Planned p = planned("concurrent");
    int n = settings.concurrentApplies();
    Cleanup cleanup = cleanup(p, p.plan(), 1, Instant.now().plus(settings.patience()));
    CountDownLatch start = new CountDownLatch(1);
    List<CompletableFuture<Object>> calls = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      CompletableFuture<Object> call = new CompletableFuture<>();
      Thread thread =
          new Thread(
              () -> {
                try {
                  start.await();
                  call.complete(call(() -> provider.apply(cleanup)));
                } catch (ProviderFailure | AmbiguousAnswer | UnreadableAnswer e) {
                  call.complete(e);
                } catch (Throwable e) {
                  call.completeExceptionally(e);
                }
              },
              "provider-check-concurrent-" + i);
      thread.setDaemon(true);
      thread.start();
      calls.add(call);
    }
    start.countDown();
    List<Object> outcomes = new ArrayList<>();
    for (CompletableFuture<Object> call : calls) {
      outcomes.add(await(call, settings.patience().multipliedBy(2), "an apply sent at once"));
    }
    for (Object outcome : outcomes) {
      if (outcome instanceof UnreadableAnswer unreadableAnswer) {
        throw unreadableAnswer;
      }
    }
    Receipt last = applyOk(p, p.plan(), 1);
    Set<String> effects = new LinkedHashSet<>();
    int appliedNow = 0;
    int replays = 0;
    List<String> refusals = new ArrayList<>();
    for (Object outcome : outcomes) {
      if (outcome instanceof Receipt receipt) {
        effects.add(receipt.effectId());
        if (receipt.replayed()) {
          replays++;
        } else {
          appliedNow++;
        }
      } else if (outcome instanceof ProviderFailure failure) {
        refusals.add(kind(failure));
      } else {
        refusals.add("no clear answer");
      }
    }
    effects.add(last.effectId());
    if (effects.size() > 1) {
      throw new Broken(
          n
              + " applies of key "
              + p.key()
              + " at once made "
              + effects.size()
              + " effects: "
              + String.join(", ", effects));
    }
    Optional<Receipt> found = lookupOk(p.item(), p.key());
    if (found.isPresent() && !effects.contains(found.get().effectId())) {
      throw new Broken(
          "after "
              + n
              + " applies at once, lookup of key "
              + p.key()
              + " found effect "
              + found.get().effectId()
              + ", not "
              + String.join(", ", effects));
    }
    return n
        + " applies of key "
        + p.key()
        + " at once: "
        + appliedNow
        + " applied, "
        + replays
        + " replayed"
        + (refusals.isEmpty() ? "" : ", " + String.join(", ", refusals))
        + "; one effect ("
        + last.effectId()
        + ")";
  }

  /** Lookup finds an applied effect under its key, and nothing under a key never applied. */
  private String lookup() {
    Planned p = planned("lookup");
    Receipt applied = applyOk(p, p.plan(), 1);
    Optional<Receipt> found = lookupOk(p.item(), p.key());
    if (found.isEmpty()) {
      throw new Broken(
          "lookup of key "
              + p.key()
              + " found nothing, though effect "
              + applied.effectId()
              + " was applied under it");
    }
    if (!found.get().effectId().equals(applied.effectId())) {
      throw new Broken(
          "lookup of key "
              + p.key()
              + " found effect "
              + found.get().effectId()
              + ", not "
              + applied.effectId()
              + ", the one applied under it");
    }
    CheckAccount any = accounts.get(0);
    Item never =
        new Item(settings.job("unknown"), settings.businessDate(), any.accountId(), any.cursor());
    String neverKey = keyOf(never);
    Optional<Receipt> none = lookupOk(never, neverKey);
    if (none.isPresent()) {
      throw new Broken(
          "lookup of key "
              + neverKey
              + ", under which nothing was ever applied, found effect "
              + none.get().effectId());
    }
    return "found effect "
        + applied.effectId()
        + " under its key "
        + p.key()
        + "; nothing under "
        + neverKey
        + ", never applied";
  }

  /**
   * A cleanup cut off after its send: once its deadline (and the allowance) has passed, lookup
   * finds it if and only if it committed, and an apply after that agrees (replays what lookup
   * found, or applies what it did not).
   */
  private String cutOff() {
    Planned p = planned("cut-off");
    Instant deadline =
        Instant.now().plus(settings.cutOffDeadline()).truncatedTo(ChronoUnit.MILLIS);
    Optional<CompletableFuture<Receipt>> own =
        provider.applyAndAbandon(cleanup(p, p.plan(), 1, deadline));
    sleepUntil(deadline.plus(settings.clockSkewAllowance()));
    Optional<Receipt> found = lookupOk(p.item(), p.key());
    String itsAnswer = own.map(answer -> ownAnswer(answer, found, p.key())).orElse("");
    if (found.isPresent()) {
      String seen =
          "cut off after the send, it committed (effect "
              + found.get().effectId()
              + itsAnswer
              + "): lookup after its deadline found it";
      if (!claims.keepsKeys()) {
        return seen + "; no apply after it (the provider keeps no keys)";
      }
      Receipt after = applyOk(p, p.plan(), 2);
      if (!after.effectId().equals(found.get().effectId()) || !after.replayed()) {
        throw new Broken(
            "lookup found effect "
                + found.get().effectId()
                + " under key "
                + p.key()
                + " after the cut-off, but a later apply of the key "
                + describe(after));
      }
      return seen + ", and a later apply replayed it";
    }
    Receipt after = applyOk(p, p.plan(), 2);
    if (after.replayed()) {
      throw new Broken(
          "lookup after the deadline found nothing under key "
              + p.key()
              + ", but a later apply replayed effect "
              + after.effectId()
              + ": the cut-off cleanup had committed (or committed after its deadline)");
    }
    return "cut off after the send, nothing committed by its deadline"
        + itsAnswer
        + ": lookup found nothing, and a later apply applied it once (effect "
        + after.effectId()
        + ")";
  }

  /**
   * The abandoned call's own answer, when it can be known (in process): a receipt it returned must
   * be what lookup found, a refusal must leave nothing behind.
   */
  private String ownAnswer(
      CompletableFuture<Receipt> answer, Optional<Receipt> found, String key) {
    Receipt committed;
    try {
      committed = answer.get(settings.patience().toMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      return "; its own call had not returned "
          + settings.patience().toSeconds()
          + " s after the lookup";
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new Inconclusive("interrupted");
    } catch (ExecutionException e) {
      if (e.getCause() instanceof ProviderFailure failure) {
        if (found.isPresent()) {
          throw new Broken(
              "the cut-off apply answered "
                  + kind(failure)
                  + " (nothing applied) later, yet lookup found effect "
                  + found.get().effectId()
                  + " under key "
                  + key);
        }
        return "; its own call answered " + kind(failure);
      }
      return "; its own call had no clear answer";
    }
    if (found.isEmpty()) {
      throw new Broken(
          "the cut-off apply committed effect "
              + committed.effectId()
              + " (its own answer, returned later), but lookup of key "
              + key
              + " after its deadline found nothing");
    }
    if (!found.get().effectId().equals(committed.effectId())) {
      throw new Broken(
          "the cut-off apply committed effect "
              + committed.effectId()
              + ", but lookup of key "
              + key
              + " found "
              + found.get().effectId());
    }
    return ", as its own call answered later";
  }

  /** A lower token than one already seen under the key is refused as stale, and changes nothing. */
  private String fencing() {
    Planned p = planned("fencing");
    Receipt applied = applyOk(p, p.plan(), 7);
    String seen;
    try {
      Receipt stale =
          call(
              () ->
                  provider.apply(
                      cleanup(p, p.plan(), 5, Instant.now().plus(settings.patience()))));
      throw new Broken(
          "a stale token (5 after 7) under key " + p.key() + " was accepted: " + describe(stale));
    } catch (ProviderFailure.StaleToken stale) {
      seen =
          "token 5 after 7 under key "
              + p.key()
              + " was refused as stale (highest seen "
              + stale.highestSeen()
              + ")";
    } catch (ProviderFailure other) {
      throw new Broken(
          "a stale token (5 after 7) under key "
              + p.key()
              + " was answered "
              + kind(other)
              + ", not stale_token: a worker that lost its lease would retry instead of stopping");
    }
    Optional<Receipt> found = lookupOk(p.item(), p.key());
    if (found.isEmpty() || !found.get().effectId().equals(applied.effectId())) {
      throw new Broken(
          "after a refused stale token, lookup of key "
              + p.key()
              + " found "
              + found.map(Receipt::effectId).orElse("nothing")
              + ", not the effect "
              + applied.effectId()
              + " applied under token 7");
    }
    return seen + "; the key's effect is still " + applied.effectId();
  }

  /** A cleanup whose deadline has passed is not committed. */
  private String deadline() {
    Planned p = planned("deadline");
    Instant past = Instant.now().minus(PAST_DEADLINE).truncatedTo(ChronoUnit.MILLIS);
    String answer;
    try {
      Receipt committed = call(() -> provider.apply(cleanup(p, p.plan(), 1, past)));
      throw new Broken(
          "a cleanup whose deadline had passed "
              + PAST_DEADLINE.toSeconds()
              + " s before was committed under key "
              + p.key()
              + ": "
              + describe(committed));
    } catch (ProviderFailure.DeadlinePassed refused) {
      answer = "refused as deadline passed";
    } catch (ProviderFailure refused) {
      answer = "refused (" + kind(refused) + ")";
    } catch (AmbiguousAnswer unclear) {
      answer = "answered unclearly (" + unclear.getMessage() + ")";
    }
    Optional<Receipt> found = lookupOk(p.item(), p.key());
    if (found.isPresent()) {
      throw new Broken(
          "a cleanup whose deadline had passed "
              + PAST_DEADLINE.toSeconds()
              + " s before was "
              + answer
              + ", yet lookup of key "
              + p.key()
              + " found its effect "
              + found.get().effectId());
    }
    String seen =
        "a cleanup " + PAST_DEADLINE.toSeconds() + " s past its deadline was " + answer;
    if (!claims.keepsKeys()) {
      return seen + "; nothing committed under key " + p.key();
    }
    Receipt fresh = applyOk(p, p.plan(), 1);
    if (fresh.replayed()) {
      throw new Broken(
          seen
              + ", yet a later apply of key "
              + p.key()
              + " replayed effect "
              + fresh.effectId()
              + ": it had been committed");
    }
    return seen
        + "; nothing committed under key "
        + p.key()
        + ", and a later apply with a fresh deadline applied it once";
  }

  private CheckResult readable() {
    if (unreadable.isEmpty()) {
      return new CheckResult(
          Guarantee.READABLE,
          true,
          Verdict.HOLDS,
          answers.get() + " answers read, every one as the protocol says");
    }
    return new CheckResult(
        Guarantee.READABLE,
        true,
        Verdict.BROKEN,
        unreadable.get(0)
            + (unreadable.size() > 1 ? " (and " + (unreadable.size() - 1) + " more)" : ""));
  }

  private CheckResult throttling() {
    if (!unreadableThrottles.isEmpty()) {
      return new CheckResult(
          Guarantee.THROTTLING, true, Verdict.BROKEN, unreadableThrottles.get(0));
    }
    if (throttles.isEmpty()) {
      return new CheckResult(
          Guarantee.THROTTLING,
          true,
          Verdict.NOT_OBSERVED,
          "the provider did not throttle during the check");
    }
    List<Duration> seen;
    synchronized (throttles) {
      seen = new ArrayList<>(throttles);
    }
    Duration least = seen.stream().min(Duration::compareTo).orElseThrow();
    Duration most = seen.stream().max(Duration::compareTo).orElseThrow();
    return new CheckResult(
        Guarantee.THROTTLING,
        true,
        Verdict.HOLDS,
        seen.size()
            + " throttled answers, Retry-After "
            + least.toMillis()
            + (least.equals(most) ? "" : "-" + most.toMillis())
            + " ms read and waited for");
  }

  // --- calls ---------------------------------------------------------------------------------

  /** One item of a check: the next safe account with something to clean up, and its plan. */
  private record Planned(Item item, Plan plan, String key) {}

  private Planned planned(String check) {
    for (int i = 0; i < accounts.size(); i++) {
      CheckAccount account = accounts.get((nextAccount + i) % accounts.size());
      Item item =
          new Item(
              settings.job(check), settings.businessDate(), account.accountId(), account.cursor());
      Plan plan = retryingTransient(() -> call(() -> provider.plan(item)), "plan");
      if (!plan.nothingToDo()) {
        nextAccount = (nextAccount + i + 1) % accounts.size();
        return new Planned(item, plan, keyOf(item));
      }
    }
    throw new Inconclusive(
        "none of the "
            + accounts.size()
            + " accounts safe to touch has anything to clean up for job "
            + settings.job(check)
            + " (every plan was nothing to do)");
  }

  private Cleanup cleanup(Planned p, Plan plan, long token, Instant deadline) {
    return new Cleanup(p.item(), plan, p.key(), token, deadline);
  }

  /**
   * An apply that should succeed: a transient refusal or a key in use is tried again with a fresh
   * deadline; other refusals and unclear answers end the check.
   */
  private Receipt applyOk(Planned p, Plan plan, long token) {
    return retryingTransient(
        () ->
            call(
                () ->
                    provider.apply(
                        cleanup(p, plan, token, Instant.now().plus(settings.patience())))),
        "apply");
  }

  private Optional<Receipt> lookupOk(Item item, String key) {
    return retryingTransient(() -> call(() -> provider.lookup(item, key)), "lookup");
  }

  private <T> T retryingTransient(Supplier<T> call, String what) {
    for (int attempt = 1; ; attempt++) {
      try {
        return call.get();
      } catch (ProviderFailure.Transient
          | ProviderFailure.KeyInUse
          | ProviderFailure.DeadlinePassed e) {
        if (attempt > TRANSIENT_RETRIES) {
          throw new Inconclusive(
              what
                  + " refused "
                  + attempt
                  + " times in a row, nothing applied: "
                  + kind(e)
                  + ": "
                  + e.getMessage());
        }
        sleep(TRANSIENT_PAUSE);
      }
    }
  }

  /**
   * One call, through the provider's throttling: a throttled answer is noted and waited for (at
   * most {@value #MAX_THROTTLED_IN_A_ROW} in a row), an unreadable one is noted and thrown.
   */
  private <T> T call(Supplier<T> call) {
    for (int attempt = 1; ; attempt++) {
      try {
        T answer = call.get();
        answers.incrementAndGet();
        return answer;
      } catch (ProviderFailure.Throttled throttled) {
        answers.incrementAndGet();
        throttles.add(throttled.retryAfter());
        waitOutThrottling(attempt, throttled.retryAfter());
      } catch (UnreadableAnswer e) {
        if (e.status() != 429) {
          unreadable.add(e.getMessage());
          throw e;
        }
        unreadableThrottles.add(e.getMessage());
        waitOutThrottling(attempt, Duration.ofSeconds(1));
      } catch (ProviderFailure e) {
        answers.incrementAndGet();
        throw e;
      }
    }
  }

  private void waitOutThrottling(int attempt, Duration retryAfter) {
    if (attempt >= MAX_THROTTLED_IN_A_ROW) {
      throw new Inconclusive(
          "the provider throttled " + attempt + " calls in a row: nothing could be checked");
    }
    sleep(retryAfter.compareTo(LONGEST_THROTTLE_WAIT) > 0 ? LONGEST_THROTTLE_WAIT : retryAfter);
  }

  private static Object await(CompletableFuture<Object> call, Duration patience, String what) {
    try {
      return call.get(patience.toMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      return new AmbiguousAnswer(what + ": no answer within " + patience.toSeconds() + " s");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new Inconclusive("interrupted");
    } catch (ExecutionException e) {
      throw new Inconclusive(what + " failed: " + e.getCause());
    }
  }

  static String describe(Receipt receipt) {
    return (receipt.replayed() ? "answered a replay of effect " : "applied effect ")
        + receipt.effectId();
  }

  static String kind(ProviderFailure failure) {
    if (failure instanceof ProviderFailure.Throttled) {
      return "throttled";
    }
    if (failure instanceof ProviderFailure.Transient) {
      return "transient";
    }
    if (failure instanceof ProviderFailure.Permanent) {
      return "permanent";
    }
    if (failure instanceof ProviderFailure.StaleToken) {
      return "stale_token";
    }
    if (failure instanceof ProviderFailure.KeyInUse) {
      return "key_in_use";
    }
    if (failure instanceof ProviderFailure.KeyReused) {
      return "key_reused";
    }
    return "deadline_passed";
  }

  private static void sleepUntil(Instant when) {
    Duration wait = Duration.between(Instant.now(), when);
    if (!wait.isNegative()) {
      sleep(wait);
    }
  }

  private static void sleep(Duration duration) {
    try {
      Thread.sleep(duration.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new Inconclusive("interrupted");
    }
  }

  /** A check that showed its guarantee broken; the message says what was seen. */
  private static final class Broken extends RuntimeException {
    Broken(String message) {
      super(message, null, false, false);
    }
  }

  /** A check that could not show its guarantee either way. */
  private static final class Inconclusive extends RuntimeException {
    Inconclusive(String message) {
      super(message, null, false, false);
    }
  }
}
